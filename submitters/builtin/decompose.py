"""Composite ops written as the writer's primitives: pointwise ops, row reductions and matmuls.

softmax(x) is max, exp(x - max), sum, divide; layer norm is mean, centred square mean, rsqrt,
scale and shift; a loss is its pointwise term and a mean. The planner then fuses the pieces back
into as few kernels as the rules allow (softmax and the norms become one kernel each).
"""

from __future__ import annotations

import math
from typing import Any

from submitters.builtin import patterns
from submitters.builtin.decompose_losses import LossRules
from submitters.builtin.ir import Axis, Matmul, NoRule, Pointwise, Reduce, Scalar, Scan, Tensor, Value, \
    broadcast, reduced_shape


class Builder(LossRules):
    """Creates IR values for the lowering (``low``), which owns the environment and the item list."""

    def __init__(self, low: Any):
        self.low = low
        self.counter = 0

    # -- entry points ----------------------------------------------------------------------------

    def function_op(self, node: Any, op: str, args: tuple, kwargs: dict, describe: str) -> Any:
        if op == "einsum":
            return self._einsum(node, args)
        if op == "where":
            cond, a, b = (self.low.value(arg) for arg in args[:3])
            return self._finish(self.pw("where", [cond, a, b]), node)
        if op == "masked_fill":  # x.masked_fill(mask, value) is where(mask, value, x)
            x, mask = self.low.value(args[0]), self.low.value(kwargs.get("mask", args[1] if len(args) > 1 else None))
            fill = self.low.value(kwargs.get("value", args[2] if len(args) > 2 else None))
            return self._finish(self.pw("where", [mask, fill, x], shape=x.shape), node)
        try:
            bound = patterns.bind(op, args, kwargs)
        except TypeError as error:
            raise NoRule(f"{describe} called as {error}") from None
        return self.module_op(node, op, None, bound)

    def module_op(self, node: Any, op: str, module: Any, bound: dict | None) -> Any:
        if module is not None and bound is None:
            return self._module_layer(node, op, module)
        if op in patterns.UNARY or op in patterns.BINARY:
            return self._pointwise(node, op, bound)
        if op in patterns.REDUCTIONS:
            return self._reduction(node, op, bound)
        if op in patterns.LOSSES:
            return self._loss(node, op, bound)
        if op in patterns.SCANS:
            return self._scan(node, op, bound)
        if op == "matmul":
            return self._matmul(node, self.low.value(bound["input"]), self.low.value(bound["other"]))
        if op == "linear":
            x, w, b = (self.low.value(bound[k]) for k in ("input", "weight", "bias"))
            return self._linear(node, x, w, b)
        raise NoRule(op)

    def reduce_tuple_item(self, node: Any, pair: Any, index: int) -> Value:
        kind = pair.kind if index == 0 else "arg" + pair.kind
        return self._finish(self.reduce(kind, pair.input, pair.dims, pair.keepdim), node)

    # -- value constructors ----------------------------------------------------------------------

    def pw(self, op: str, inputs: list[Value], shape: Any = "auto", **attrs: Any) -> Pointwise:
        tensors = [v for v in inputs if v is not None and not isinstance(v, Scalar)]
        shapes = [v.shape for v in tensors if v.shape is not None]
        if shape == "auto":  # GroupNorm's per-group statistics have no tensor shape (None)
            shape = broadcast(*shapes) if shapes else (None if tensors else ())
        dtype = next((v.dtype for v in inputs if getattr(v, "is_float", False)), None)
        if op in _BOOL_OPS:
            dtype = _bool_dtype()
        elif dtype is None:
            dtype = _default_dtype()
        value = Pointwise(name=self._fresh(op), shape=shape, dtype=dtype, op=op, inputs=list(inputs),
                          attrs={k: _as_scalar(v) for k, v in attrs.items()})
        return self.low.emit(value)

    def reduce(self, kind: str, x: Value, dims: Any, keepdim: bool, count_offset: int | None = None) -> Reduce:
        if isinstance(dims, Axis):
            axis, shape = dims, None
        else:
            axis, shape = Axis(dims=tuple(dims)), reduced_shape(x.shape, tuple(dims), keepdim)
        dtype = _index_dtype() if kind.startswith("arg") else x.dtype
        value = Reduce(name=self._fresh(kind), shape=shape, dtype=dtype, kind=kind, input=x, axis=axis,
                       keepdim=keepdim, count_offset=count_offset)
        return self.low.emit(value)

    def _fresh(self, tag: str) -> str:
        self.counter += 1
        return f"t{self.counter}__{tag}"

    def _finish(self, value: Value, node: Any) -> Value:
        """The last value of a decomposition stands for ``node``: its name, shape and dtype."""
        from submitters.builtin.names import python_name

        traced = self.low.traced_value(node)
        value.name = python_name(node.name)
        if hasattr(traced, "shape"):
            value.shape, value.dtype = tuple(traced.shape), traced.dtype
        return value

    # -- pointwise ---------------------------------------------------------------------------------

    def _pointwise(self, node: Any, op: str, bound: dict) -> Value:
        traced = self.low.traced_value(node)
        if not traced.dtype.is_floating_point and str(traced.dtype) != "torch.bool":
            raise NoRule(f"integer arithmetic ({op} giving {traced.dtype})")
        x = self.low.value(bound["input"])
        if op not in patterns.BINARY:
            attrs = {name: self._attr(op, name, bound[name]) for name, _ in patterns.UNARY[op]}
            attrs = {k: v for k, v in attrs.items() if v is not None}
            return self._finish(self.pw(op, [x], **attrs), node)
        y = self.low.value(bound["other"])
        if op == "pow":
            return self._finish(self._pow(x, y), node)
        if op == "rsub":
            op, x, y = "sub", y, x
        if op == "div" and bound.get("rounding_mode") is not None:
            op = {"floor": "floor_divide", "trunc": "trunc_divide"}[bound["rounding_mode"]]
        alpha = bound.get("alpha", 1)
        if alpha != 1:
            y = self.pw("mul", [y, _as_scalar(alpha)])
        return self._finish(self.pw(op, [x, y]), node)

    def _attr(self, op: str, name: str, value: Any) -> Any:
        if value is None or isinstance(value, (int, float, str, bool)):
            return value
        found = self.low.value(value)
        if not isinstance(found, Scalar):
            raise NoRule(f"{op} with a tensor {name}")
        return found

    def _pow(self, x: Value, y: Value) -> Value:
        if isinstance(y, Scalar):
            return self.pw("pow_scalar", [x], exponent=y)
        if isinstance(x, Scalar) and x.is_literal and float(x.literal) > 0:
            return self.pw("rpow", [y], base=x)
        raise NoRule("a power with a tensor exponent")

    # -- reductions --------------------------------------------------------------------------------

    def _reduction(self, node: Any, op: str, bound: dict) -> Any:
        import torch
        import torch.fx

        x = self.low.value(bound["input"])
        rank = len(x.shape)
        if op in ("max", "min") and isinstance(bound["dim"], torch.fx.Node) \
                and isinstance(self.low.traced_value(bound["dim"]), torch.Tensor):
            other = self.low.value(bound["dim"])  # torch.max(a, b), b a tensor: the elementwise maximum
            return self._finish(self.pw("maximum" if op == "max" else "minimum", [x, other]), node)
        if bound.get("dtype") is not None:
            raise NoRule(f"{op} with a dtype argument")
        if op in ("max", "min"):
            if bound["dim"] is None:
                return self._finish(self.reduce(op, x, all_dims(rank), False), node)
            from submitters.builtin.names import ReduceTuple

            return ReduceTuple(x, norm_dims(bound["dim"], rank), bool(bound["keepdim"]), op)
        handler = getattr(self, f"_red_{op}")
        return self._finish(handler(x, bound, rank), node)

    def _red_sum(self, x: Value, bound: dict, rank: int, mean: bool = False) -> Value:
        return self.reduce("sum", x, norm_dims(bound["dim"], rank), bool(bound["keepdim"]), 0 if mean else None)

    def _red_mean(self, x: Value, bound: dict, rank: int) -> Value:
        return self._red_sum(x, bound, rank, mean=True)

    def _red_amax(self, x: Value, bound: dict, rank: int) -> Value:
        return self.reduce("max", x, norm_dims(bound["dim"], rank), bool(bound["keepdim"]))

    def _red_amin(self, x: Value, bound: dict, rank: int) -> Value:
        return self.reduce("min", x, norm_dims(bound["dim"], rank), bool(bound["keepdim"]))

    def _red_argmax(self, x: Value, bound: dict, rank: int) -> Value:
        return self.reduce("argmax", x, norm_dims(bound["dim"], rank), bool(bound["keepdim"]))

    def _red_argmin(self, x: Value, bound: dict, rank: int) -> Value:
        return self.reduce("argmin", x, norm_dims(bound["dim"], rank), bool(bound["keepdim"]))

    def _red_logsumexp(self, x: Value, bound: dict, rank: int) -> Value:
        dims = norm_dims(bound["dim"], rank)
        peak = self.reduce("max", x, dims, True)
        total = self.reduce("sum", self.pw("exp", [self.pw("sub", [x, peak])]), dims, True)
        result = self.pw("add", [peak, self.pw("log", [total])])
        if bound["keepdim"]:
            return result
        return self.pw("identity", [result], shape=reduced_shape(x.shape, dims, False))

    def _red_softmax(self, x: Value, bound: dict, rank: int) -> Value:
        dims = self._softmax_dims(bound, rank)
        shifted = self.pw("sub", [x, self.reduce("max", x, dims, True)])
        exps = self.pw("exp", [shifted])
        return self.pw("div", [exps, self.reduce("sum", exps, dims, True)])

    def _red_softmin(self, x: Value, bound: dict, rank: int) -> Value:
        return self._red_softmax(self.pw("neg", [x]), bound, rank)

    def _red_log_softmax(self, x: Value, bound: dict, rank: int) -> Value:
        dims = self._softmax_dims(bound, rank)
        shifted = self.pw("sub", [x, self.reduce("max", x, dims, True)])
        total = self.reduce("sum", self.pw("exp", [shifted]), dims, True)
        return self.pw("sub", [shifted, self.pw("log", [total])])

    def _softmax_dims(self, bound: dict, rank: int) -> tuple:
        if bound["dim"] is None:
            raise NoRule("softmax without an explicit dim")
        return norm_dims(bound["dim"], rank)

    def _red_norm(self, x: Value, bound: dict, rank: int, order: Any = None) -> Value:
        order = bound["p"] if order is None else order
        dims, keepdim = norm_dims(bound["dim"], rank), bool(bound["keepdim"])
        return self.vector_norm(x, order, dims, keepdim)

    def _red_vector_norm(self, x: Value, bound: dict, rank: int) -> Value:
        return self._red_norm(x, bound, rank, order=bound["ord"])

    def vector_norm(self, x: Value, order: Any, dims: tuple, keepdim: bool) -> Value:
        if order in ("fro", 2, 2.0):
            return self.pw("sqrt", [self.reduce("sum", self.pw("mul", [x, x]), dims, keepdim)])
        if order in (1, 1.0):
            return self.reduce("sum", self.pw("abs", [x]), dims, keepdim)
        if order in (math.inf, -math.inf):
            return self.reduce("max" if order > 0 else "min", self.pw("abs", [x]), dims, keepdim)
        if isinstance(order, (int, float)) and order > 0:
            powered = self.pw("pow_scalar", [self.pw("abs", [x])], exponent=float(order))
            return self.pw("pow_scalar", [self.reduce("sum", powered, dims, keepdim)], exponent=1.0 / order)
        raise NoRule(f"a norm of order {order!r}")

    def _red_var(self, x: Value, bound: dict, rank: int) -> Value:
        dims = norm_dims(bound["dim"], rank)
        correction = bound["correction"]
        if correction is None:
            correction = 0 if bound["unbiased"] is False else 1
        centred = self.pw("sub", [x, self.reduce("sum", x, dims, True, 0)])
        return self.reduce("sum", self.pw("mul", [centred, centred]), dims, bool(bound["keepdim"]), int(correction))

    def _red_std(self, x: Value, bound: dict, rank: int) -> Value:
        return self.pw("sqrt", [self._red_var(x, bound, rank)])

    def _red_normalize(self, x: Value, bound: dict, rank: int) -> Value:
        norm = self.vector_norm(x, bound["p"], norm_dims(bound["dim"], rank), True)
        return self.pw("div", [x, self.pw("clamp_min", [norm], min=bound["eps"])])

    def _normalized_dims(self, shape: Any) -> int:
        """How many trailing dims a layer/RMS norm covers (its shape may be a traced ``x.shape[-1:]``)."""
        if _is_node(shape):
            shape = self.low.traced_value(shape)
        return 1 if isinstance(shape, int) else len(shape)

    def _red_layer_norm(self, x: Value, bound: dict, rank: int) -> Value:
        count = self._normalized_dims(bound["normalized_shape"])
        weight, bias = self.low.value(bound["weight"]), self.low.value(bound["bias"])
        return self.normalize(x, tuple(range(rank - count, rank)), bound["eps"], weight, bias)

    def _red_rms_norm(self, x: Value, bound: dict, rank: int) -> Value:
        count = self._normalized_dims(bound["normalized_shape"])
        eps = bound["eps"] if bound["eps"] is not None else _float_eps(x)
        dims = tuple(range(rank - count, rank))
        mean_square = self.reduce("sum", self.pw("mul", [x, x]), dims, True, 0)
        scaled = self.pw("mul", [x, self.pw("rsqrt", [self.pw("add", [mean_square, _as_scalar(eps)])])])
        weight = self.low.value(bound["weight"])
        return self.pw("mul", [scaled, weight]) if weight is not None else scaled

    def _red_group_norm(self, x: Value, bound: dict, rank: int) -> Value:
        groups = _as_scalar(bound["num_groups"] if not _is_node(bound["num_groups"])
                            else self.low.value(bound["num_groups"]))
        weight, bias = (self._per_channel(self.low.value(bound[k]), rank) for k in ("weight", "bias"))
        return self.normalize(x, Axis(groups=groups), bound["eps"], weight, bias)

    def _red_instance_norm(self, x: Value, bound: dict, rank: int) -> Value:
        if not bound["use_input_stats"] or bound["running_mean"] is not None:
            raise NoRule("instance norm with running statistics")
        weight, bias = (self._per_channel(self.low.value(bound[k]), rank) for k in ("weight", "bias"))
        return self.normalize(x, tuple(range(2, rank)), bound["eps"], weight, bias)

    def normalize(self, x: Value, axis: Any, eps: Any, weight: Value | None, bias: Value | None) -> Value:
        """(x - mean) / sqrt(var + eps) * weight + bias over ``axis`` (dims or GroupNorm groups)."""
        mean = self.reduce("sum", x, axis, True, 0)
        centred = self.pw("sub", [x, mean])
        variance = self.reduce("sum", self.pw("mul", [centred, centred]), axis, True, 0)
        inv_std = self.pw("rsqrt", [self.pw("add", [variance, _as_scalar(eps)])])
        result = self.pw("mul", [centred, inv_std])
        if weight is not None:
            result = self.pw("mul", [result, weight])
        if bias is not None:
            result = self.pw("add", [result, bias])
        return result

    def _per_channel(self, value: Value | None, rank: int) -> Value | None:
        """A (C,) affine parameter seen as (C, 1, ..., 1) against an (N, C, ...) input."""
        if value is None:
            return None
        if not isinstance(value, Tensor):
            raise NoRule("a norm whose affine parameters are computed in forward")
        ones = ", ".join(["1"] * (rank - 2))
        return Tensor(name=value.name, shape=tuple(value.shape) + (1,) * (rank - 2), dtype=value.dtype,
                      expr=f"{value.expr}.view(-1, {ones})" if ones else value.expr)

    def _scan(self, node: Any, op: str, bound: dict) -> Value:
        x = self.low.value(bound["input"])
        if bound["dtype"] is not None:
            raise NoRule(f"{op} with a dtype argument")
        (dim,) = norm_dims(bound["dim"], len(x.shape))
        scan = Scan(name=self._fresh(op), shape=x.shape, dtype=x.dtype, kind=op, input=x, axis=Axis(dims=(dim,)))
        return self._finish(self.low.emit(scan), node)

    # -- layers with their own parameters ---------------------------------------------------------

    def _module_layer(self, node: Any, op: str, module: Any) -> Value:
        from submitters.builtin.names import attribute_path

        path = attribute_path(node.target)
        x = self.low.value(node.args[0])
        params = {name: self._parameter(module, path, name) for name in ("weight", "bias")}
        rank = len(x.shape)
        if op == "linear":
            return self._linear(node, x, params["weight"], params["bias"])
        if op == "layer_norm":
            bound = {"normalized_shape": module.normalized_shape, "eps": module.eps, **params}
        elif op == "group_norm":
            bound = {"num_groups": Scalar(name="groups", shape=None, expr=f"{path}.num_groups"), "eps": module.eps,
                     **params}
        elif op == "instance_norm":
            if module.track_running_stats and not module.training:
                raise NoRule("instance norm in eval mode with running statistics")
            bound = {"running_mean": None, "use_input_stats": True, "eps": module.eps, **params}
        else:  # rms_norm
            bound = {"normalized_shape": module.normalized_shape, "eps": module.eps, "weight": params["weight"]}
        handler = getattr(self, f"_red_{op}")
        return self._finish(handler(x, bound, rank), node)

    def _parameter(self, module: Any, path: str, name: str) -> Value | None:
        tensor = getattr(module, name, None)
        if tensor is None:
            return None
        return Tensor(name=f"{path.replace('self.', '').replace('.', '_')}_{name}", shape=tuple(tensor.shape),
                      dtype=tensor.dtype, expr=f"{path}.{name}")

    # -- matmul --------------------------------------------------------------------------------------

    def _linear(self, node: Any, x: Value, weight: Value, bias: Value | None) -> Value:
        traced = self.low.traced_value(node)
        product = self.low.emit(Matmul(name=self._fresh("linear"), shape=tuple(traced.shape), dtype=traced.dtype,
                                       a=x, b=weight, layout="linear"))
        return self._finish(self.pw("add", [product, bias]) if bias is not None else product, node)

    def _matmul(self, node: Any, a: Value, b: Value) -> Value:
        if isinstance(a, Scalar) or isinstance(b, Scalar):
            raise NoRule("a matmul with a scalar operand")
        if len(a.shape) >= 2 and len(b.shape) == 2:
            layout = "matmul"
        elif len(a.shape) >= 3 and len(b.shape) == len(a.shape) and a.shape[:-2] == b.shape[:-2]:
            layout = "batched"
        else:
            raise NoRule(f"a matmul of shapes {tuple(a.shape)} and {tuple(b.shape)}")
        if layout == "matmul" and len(a.shape) == 2 and b.shape[-1] == 1 and isinstance(b, Tensor):
            # a matrix-vector product: one dot product per row is a row reduction, which reads A once
            # with every row in flight, instead of a tile that is almost all masked-off columns
            row = Tensor(name=b.name, shape=(1, b.shape[0]), dtype=b.dtype, expr=f"{b.expr}.reshape(1, -1)")
            return self._finish(self.reduce("sum", self.pw("mul", [a, row]), (1,), True), node)
        traced = self.low.traced_value(node)
        product = Matmul(name=self._fresh("matmul"), shape=tuple(traced.shape), dtype=traced.dtype, a=a, b=b,
                         layout=layout)
        return self._finish(self.low.emit(product), node)

    def _einsum(self, node: Any, args: tuple) -> Value:
        equation = args[0].replace(" ", "")
        operands = list(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) else list(args[1:])
        inputs, _, out = equation.partition("->")
        parts = inputs.split(",")
        if len(parts) != 2 or len(operands) != 2 or not out:
            raise NoRule(f"einsum {equation!r}")
        left, right = parts
        plain = len(right) == 2 and left[-1] == right[0] and out == left[:-1] + right[1]
        batched = len(left) == len(right) == len(out) >= 3 and left[:-2] == right[:-2] == out[:-2] \
            and left[-1] == right[-2] and out[-2:] == left[-2] + right[-1]
        if not (plain or batched):
            raise NoRule(f"einsum {equation!r}")
        return self._matmul(node, self.low.value(operands[0]), self.low.value(operands[1]))


def norm_dims(dim: Any, rank: int) -> tuple[int, ...]:
    """Reduction dims as sorted non-negative ints; None or () means all; NoRule unless adjacent."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return all_dims(rank)
    if isinstance(dim, int):
        dims = (dim % rank if rank else 0,)
    elif isinstance(dim, (tuple, list)) and all(isinstance(d, int) for d in dim):
        dims = tuple(sorted({d % rank for d in dim}))
    else:
        raise NoRule(f"a reduction over dims given as {type(dim).__name__}")
    if dims and dims[-1] - dims[0] != len(dims) - 1:
        raise NoRule(f"a reduction over non-adjacent dims {dims}")
    return dims


def all_dims(rank: int) -> tuple[int, ...]:
    return tuple(range(rank))


def _is_node(value: Any) -> bool:
    import torch.fx

    return isinstance(value, torch.fx.Node)


def _as_scalar(value: Any) -> Any:
    if isinstance(value, Value) or value is None:
        return value
    return Scalar(name="literal", shape=None, literal=value)


def _float_eps(x: Value) -> float:
    import torch

    return torch.finfo(x.dtype if x.dtype is not None and x.dtype.is_floating_point else torch.float32).eps


def _default_dtype() -> Any:
    import torch

    return torch.float32


def _bool_dtype() -> Any:
    import torch

    return torch.bool


def _index_dtype() -> Any:
    import torch

    return torch.int64


_BOOL_OPS = {"gt", "lt", "ge", "le", "eq", "ne", "logical_and", "logical_or", "logical_not"}
