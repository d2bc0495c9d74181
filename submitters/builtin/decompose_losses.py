"""Losses as the writer's primitives: each is its pointwise term and a reduction (mean, sum, batchmean).

Cross-entropy picks the target's logit with a row reduction over ``where(column == target, x, 0)``
next to the logsumexp, so one row kernel computes both; ignored targets are masked out of the mean.
"""

from __future__ import annotations

from typing import Any

from submitters.builtin.ir import NoRule, Tensor, Value


class LossRules:
    """Mixed into ``decompose.Builder``: uses its ``pw``, ``reduce``, ``vector_norm`` and ``_finish``."""

    def _loss(self, node: Any, op: str, bound: dict) -> Value:
        if bound.get("size_average") is not None or bound.get("reduce") is not None:
            raise NoRule(f"{op} with the legacy size_average/reduce arguments")
        if op == "triplet_margin_loss":
            return self._finish(self._triplet(bound), node)
        if op == "cross_entropy":
            return self._finish(self._cross_entropy(bound), node)
        x, target = self.low.value(bound["input"]), self.low.value(bound["target"])
        difference = self.pw("sub", [x, target])
        if op == "mse_loss":
            term = self.pw("mul", [difference, difference])
        elif op == "l1_loss":
            term = self.pw("abs", [difference])
        elif op == "smooth_l1_loss":
            term = self.pw("smooth_l1", [difference], beta=bound["beta"])
        elif op == "huber_loss":
            term = self.pw("huber", [difference], delta=bound["delta"])
        else:
            term = self.pw("kl_div_log_target" if bound["log_target"] else "kl_div", [x, target])
        return self._finish(self._reduce_loss(term, bound["reduction"]), node)

    def _reduce_loss(self, term: Value, reduction: str) -> Value:
        rank = len(term.shape)
        if reduction == "none":
            return term
        if reduction == "sum":
            return self.reduce("sum", term, tuple(range(rank)), False)
        if reduction == "mean" or (reduction == "batchmean" and rank <= 1):
            return self.reduce("sum", term, tuple(range(rank)), False, 0)
        if reduction == "batchmean":
            per_sample = self.reduce("sum", term, tuple(range(1, rank)), False)
            return self.reduce("sum", per_sample, (0,), False, 0)
        raise NoRule(f"loss reduction {reduction!r}")

    def _triplet(self, bound: dict) -> Value:
        if bound["swap"]:
            raise NoRule("triplet margin loss with swap=True")
        anchor, positive, negative = (self.low.value(bound[k]) for k in ("input", "positive", "negative"))
        last = (len(anchor.shape) - 1,)
        distances = []
        for other in (positive, negative):
            shifted = self.pw("add", [self.pw("sub", [anchor, other]), _literal(bound["eps"])])
            distances.append(self.vector_norm(shifted, bound["p"], last, False))
        gap = self.pw("add", [self.pw("sub", distances), _literal(bound["margin"])])
        return self._reduce_loss(self.pw("clamp_min", [gap], min=0.0), bound["reduction"])

    def _cross_entropy(self, bound: dict) -> Value:
        logits, target = self.low.value(bound["input"]), self.low.value(bound["target"])
        if bound["weight"] is not None or bound["label_smoothing"] != 0.0:
            raise NoRule("cross_entropy with class weights or label smoothing")
        if len(logits.shape) != 2 or not isinstance(target, Tensor) or target.is_float:
            raise NoRule("cross_entropy other than (N, C) logits with integer class targets")
        column = Tensor(name=target.name, shape=(target.shape[0], 1), dtype=target.dtype, expr=f"{target.expr}.view(-1, 1)")
        peak = self.reduce("max", logits, (1,), True)
        total = self.reduce("sum", self.pw("exp", [self.pw("sub", [logits, peak])]), (1,), True)
        hit = self.pw("eq", [self.pw("coord", [logits], dim=1), column])
        picked = self.reduce("sum", self.pw("where", [hit, logits, _zero()]), (1,), True)
        loss = self.pw("sub", [self.pw("add", [peak, self.pw("log", [total])]), picked])
        valid = self.pw("ne", [column, _literal(bound["ignore_index"])])
        loss = self.pw("mul", [loss, valid])
        reduction = bound["reduction"]
        if reduction == "none":
            return self.pw("identity", [loss], shape=(logits.shape[0],))
        summed = self.reduce("sum", loss, (0, 1), False)
        if reduction == "sum":
            return summed
        return self.pw("div", [summed, self.reduce("sum", valid, (0, 1), False)])


def _zero() -> Any:
    return _literal(0.0)


def _literal(value: Any) -> Any:
    from submitters.builtin.ir import Scalar

    return Scalar(name="literal", shape=None, literal=value)
