"""The pieces MKEvolve evolves: units (submodules) of a decomposition and the kernels proposed for them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.records.usage import Usage

# Unit statuses. A unit is searched while ``pending``; ``failed`` units are split (or given up on),
# ``split`` and ``merged`` units are replaced by their children / their merge.
PENDING, KERNEL, FAILED, PYTORCH, SPLIT, MERGED = "pending", "kernel", "failed", "pytorch", "split", "merged"

# Flags on a sub-problem verdict that do not disqualify a kernel: the probe says the *sub-problem's*
# inputs make a trivial answer pass too (captured activations with little variation), which is a fact
# about the inputs, not about the kernel; the composed model is judged again end to end.
TOLERATED_FLAGS = frozenset({"degenerate_problem"})


class Undecomposable(Exception):
    """This way of decomposing does not apply to the model; the message says why."""


@dataclass(eq=False)
class Proposal:
    """One kernel proposed for a unit, with the judge's verdict on it (None: no code to judge)."""

    source: str
    sha: str
    usage: Usage
    step: int                       # transcript step of the call that produced it
    depth: int
    record: dict | None = None
    no_code: str = ""

    @property
    def correct(self) -> bool:
        return bool(self.record) and self.record.get("status") == "ok"

    @property
    def flags(self) -> list[str]:
        return list((self.record or {}).get("flags") or [])

    @property
    def pytorch_only(self) -> bool:
        """Correct, but no custom kernel ran: the reference's own PyTorch in disguise."""
        return self.correct and "no_custom_kernel" in self.flags

    @property
    def accepted(self) -> bool:
        """Correct, clean and a real kernel: fit to stand in for its unit."""
        return self.correct and not (set(self.flags) - TOLERATED_FLAGS)

    @property
    def ms(self) -> float | None:
        return (self.record or {}).get("candidate_ms")

    @property
    def speedup(self) -> float | None:
        return (self.record or {}).get("speedup")

    def score(self) -> tuple:
        """Lower is better: accepted first, then measured time, then tokens (the CPU's only tiebreak)."""
        ms = self.ms if self.ms is not None else float("inf")
        return (0 if self.accepted else 1 if self.source else 2, ms, self.usage.total_tokens)


@dataclass
class Unit:
    """A submodule: a contiguous run of the model's operations (or one child module, or the whole model)."""

    name: str
    start: int
    stop: int
    status: str = PENDING
    origin: dict[str, Any] = field(default_factory=dict)   # {"split_from": "s1"} or {"merged_from": [...]}
    best: Proposal | None = None
    usage: Usage = field(default_factory=Usage)
    proposals: int = 0
    note: str = ""
    opaque: str = ""                 # why no kernel can be asked for (a module that cannot be rebuilt ...)

    @property
    def span(self) -> tuple[int, int]:
        return self.start, self.stop
