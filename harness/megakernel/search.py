"""Schedule search: propose schedule configs, keep only validated and VM-correct ones, rank them by
measured GPU time when a GPU is present (the megakernel executor), else by the cost model.

Proposers are small objects with ``propose(model, history, rng, n) -> list`` returning
``ScheduleConfig``s (or config dicts, or whole schedule documents). ``random`` samples the space,
``mutation`` changes one field of the best kept configs; an LLM proposer can be passed in the same
way (``ScheduleSearch(proposers=[my_llm_proposer])``). Registered as generator ``schedule-search``.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field, replace

from harness.errors import UserError
from harness.megakernel import cost
from harness.megakernel.configs import PAGINGS, PRESETS, SM_POLICIES, ModelConfig, ScheduleConfig
from harness.megakernel.lowering import lower
from harness.megakernel.validator import validate

VM_MAX_PARAMS = 4_000_000


@dataclass
class Entry:
    config: ScheduleConfig | None
    origin: str
    status: str                      # kept | infeasible | rejected | vm_mismatch | not_runnable | gpu_deadlock
    reason: str = ""
    cost: dict = field(default_factory=dict)
    vm_max_abs_err: float | None = None
    doc: dict | None = None

    @property
    def makespan_us(self) -> float:
        return self.cost.get("makespan_us", float("inf"))

    @property
    def score_us(self) -> float:
        """What the search ranks by: the measured GPU time where it was measured, else the estimate."""
        measured = self.cost.get("gpu_us")
        return measured if measured is not None else self.makespan_us


def _tiles(n: int) -> list[int]:
    return [0] + [w for w in (2, 4, 8, 16, 32, 64, 128, 256, 512) if w < n]


class RandomProposer:
    name = "random"

    def __init__(self, max_sms: int = 8):
        self.max_sms = max_sms

    def propose(self, model: ModelConfig, history: list[Entry], rng: random.Random, n: int) -> list:
        return [self.sample(model, rng) for _ in range(n)]

    def sample(self, model: ModelConfig, rng: random.Random) -> ScheduleConfig:
        return ScheduleConfig(num_sms=rng.randint(1, self.max_sms), gemv_tile=rng.choice(_tiles(model.hidden)),
                              lm_head_tile=rng.choice(_tiles(model.vocab)),
                              silu_tile=rng.choice(_tiles(model.intermediate)),
                              attn_heads_per_task=rng.choice([0] + [h for h in (1, 2, 4, 8) if h < model.heads]),
                              sm_policy=rng.choice(SM_POLICIES), paging=rng.choice(PAGINGS),
                              smem_local=rng.random() < 0.3)


class MutationProposer(RandomProposer):
    """Change one field of one of the best kept configs to a random legal value."""

    name = "mutation"

    def propose(self, model, history, rng, n) -> list:
        kept = sorted((e for e in history if e.status == "kept"), key=lambda e: e.score_us)[:4]
        if not kept:
            return [self.sample(model, rng) for _ in range(n)]
        result = []
        for _ in range(n):
            parent, donor = rng.choice(kept).config, self.sample(model, rng)
            name = rng.choice(list(parent.to_dict()))
            result.append(replace(parent, **{name: getattr(donor, name)}))
        return result


PROPOSERS = {"random": RandomProposer, "mutation": MutationProposer}


def _proxy(model: ModelConfig) -> ModelConfig:
    """A small model of the same family shape, for the VM check of schedules of a big model."""
    heads, kv = min(model.heads, 4), min(model.kv_heads, 4)
    kv = kv if heads % kv == 0 else 1
    return replace(model, hidden=min(model.hidden, 32), layers=min(model.layers, 2), heads=heads,
                   kv_heads=kv, head_dim=min(model.head_dim, 8), intermediate=min(model.intermediate, 64),
                   vocab=min(model.vocab, 64), max_seq=max(8, min(model.max_seq, 16)))


def _params(model: ModelConfig) -> int:
    per_layer = 2 * model.hidden * (model.q_dim + model.kv_dim) + 3 * model.hidden * model.intermediate
    return model.layers * per_layer + 2 * model.vocab * model.hidden


def _gpu_present() -> bool:
    """A GPU whose time means something: not under Triton's interpreter."""
    import os

    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET") != "1"


class Search:
    """``measure``: "auto" times every kept schedule on the GPU when one is present (the megakernel
    executor), "off" ranks by the cost model only."""

    def __init__(self, model: ModelConfig, proposers, seed: int = 0, vm_steps: int = 3, target: dict | None = None,
                 measure: str = "auto"):
        self.model, self.rng, self.vm_steps, self.target = model, random.Random(seed), vm_steps, target
        self.measure = measure == "auto" and _gpu_present()
        self._weights = None
        self.proposers = [PROPOSERS[p]() if isinstance(p, str) else p for p in proposers]
        self.history: list[Entry] = []
        self.seen: set[str] = set()

    def run(self, budget: int, batch: int = 4) -> list[Entry]:
        while len(self.history) < budget:
            before = len(self.history)
            for proposer in self.proposers:
                for proposal in proposer.propose(self.model, self.history, self.rng, batch):
                    if len(self.history) < budget:
                        self._consider(proposal, getattr(proposer, "name", type(proposer).__name__))
            if len(self.history) == before:
                break  # every proposal was a repeat: the space is exhausted
        return self.ranked()

    def ranked(self) -> list[Entry]:
        return sorted((e for e in self.history if e.status == "kept"), key=lambda e: e.score_us)

    def _consider(self, proposal, origin: str) -> None:
        key = json.dumps(proposal.to_dict() if isinstance(proposal, ScheduleConfig) else proposal, sort_keys=True)
        if key in self.seen:
            return
        self.seen.add(key)
        self.history.append(self.evaluate(proposal, origin))

    def evaluate(self, proposal, origin: str) -> Entry:
        try:
            config = ScheduleConfig.from_dict(proposal) if isinstance(proposal, dict) and "tasks" not in proposal else proposal
            doc = proposal if isinstance(proposal, dict) and "tasks" in proposal else lower(self.model, config, 0, self.target)
        except UserError as error:
            return Entry(None, origin, "infeasible", str(error))
        config = config if isinstance(config, ScheduleConfig) else None
        verdict = validate(doc)
        if not verdict.ok:
            return Entry(config, origin, "rejected", "; ".join(v["message"] for v in verdict.violations[:2]))
        entry = self._vm_gate(Entry(config, origin, "kept", cost=cost.estimate(doc), doc=doc))
        return self._timed(entry) if self.measure and entry.status == "kept" else entry

    def _timed(self, entry: Entry) -> Entry:
        from harness.megakernel.executor_check import device_weights
        from harness.megakernel.executor_timing import schedule_ms

        self._weights = self._weights or device_weights(self.model, seed=0, device="cuda")
        try:
            timing = schedule_ms(entry.doc, self._weights)
        except UserError as error:   # e.g. more SM programs than this GPU has
            entry.status, entry.reason = "not_runnable", str(error)
            return entry
        if not timing["ok"]:
            entry.status, entry.reason = "gpu_deadlock", f"flagged on the GPU: {timing['deadlock']['stuck'][:2]}"
            return entry
        entry.cost["gpu_us"] = timing["median_ms"] * 1000
        return entry

    def _vm_gate(self, entry: Entry) -> Entry:
        if entry.config is None:
            entry.status, entry.reason = "vm_unchecked", "a raw schedule has no config to replay on the VM"
            return entry
        from harness.megakernel import vmcheck

        small = _params(self.model) <= VM_MAX_PARAMS
        model = self.model if small else _proxy(self.model)
        config = entry.config if small else replace(entry.config, num_sms=min(entry.config.num_sms, 8))
        agreement = vmcheck.check(model, config, steps=self.vm_steps)
        entry.vm_max_abs_err = agreement.max_abs_err
        if not small:
            entry.reason = f"VM checked on proxy model {model.name()}"
        if not agreement.ok:
            entry.status, entry.reason = "vm_mismatch", f"VM differs from eager (max |err| {agreement.max_abs_err:.2e})"
        return entry


def model_of(problem) -> ModelConfig:
    if isinstance(problem, ModelConfig):
        return problem
    if isinstance(problem, str) and problem in PRESETS:
        return PRESETS[problem]
    if isinstance(problem, dict):
        return ModelConfig.from_dict(problem)
    inner = getattr(problem, "model_config", None)
    if isinstance(inner, ModelConfig):
        return inner
    raise UserError(f"schedule-search needs a Llama config (ModelConfig, dict or one of "
                    f"{sorted(PRESETS)}), got {type(problem).__name__}")


class ScheduleSearch:
    """Generator: returns the kept schedules (JSON sources) for a model config, best first."""

    def __init__(self, budget: int = 24, seed: int = 0, proposers=("random", "mutation"),
                 keep: int = 4, vm_steps: int = 3, target: dict | None = None, measure: str = "auto"):
        self.budget, self.seed, self.proposers, self.keep = budget, seed, list(proposers), keep
        self.vm_steps, self.target, self.measure = vm_steps, target, measure

    def search(self, problem) -> Search:
        search = Search(model_of(problem), self.proposers, self.seed, self.vm_steps, self.target, self.measure)
        search.run(self.budget)
        return search

    def generate(self, problem, ctx=None) -> list:
        from harness.candidate import Candidate

        kept = self.search(problem).ranked()[: self.keep]
        return [Candidate(source=json.dumps(e.doc), label=e.config.name(),
                          provenance={"kind": "megakernel-schedule", "origin": e.origin,
                                      "config": e.config.to_dict(), "makespan_us": e.makespan_us,
                                      "gpu_us": e.cost.get("gpu_us"),
                                      "max_sm_bytes": e.cost["max_sm_bytes"], "vm_max_abs_err": e.vm_max_abs_err})
                for e in kept]
