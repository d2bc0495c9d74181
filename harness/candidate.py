"""What a generator returns (Candidate) and what it is given to work with (GenerationContext)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable

from harness.records.usage import Usage


@dataclass
class Candidate:
    """One proposed solution: a self-contained source file defining ``ModelNew``."""

    source: str
    label: str = ""
    usage: Usage = field(default_factory=Usage)
    transcript: list[dict] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    provider: str | None = None
    model: str | None = None

    @property
    def sha(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]


@dataclass
class Budget:
    """Limits on what generation may spend for one problem (None: no limit)."""

    max_tokens: int | None = None
    max_cost_usd: float | None = None

    def exceeded_by(self, usage: Usage) -> str | None:
        """A reason string when ``usage`` is over a limit, else None."""
        if self.max_tokens is not None and usage.total_tokens > self.max_tokens:
            return f"token budget spent: {usage.total_tokens} > {self.max_tokens}"
        if self.max_cost_usd is not None and usage.cost_usd > self.max_cost_usd:
            return f"cost budget spent: {_dollars_over(usage.cost_usd, self.max_cost_usd)}"
        return None


def _dollars_over(spent: float, limit: float) -> str:
    """``$spent > $limit`` with as many decimals as it takes for the two to read differently."""
    for decimals in range(4, 13):
        left, right = f"{spent:.{decimals}f}", f"{limit:.{decimals}f}"
        if left != right:
            break
    return f"${left} > ${right}"


@dataclass
class GenerationContext:
    """Everything a generator may use. ``evaluate`` asks the judge for a verdict on a draft source
    (status, reason, bounded mismatch report, timings); it never reveals expected outputs."""

    options: Any
    evaluate: Callable[..., dict]
    device_facts: dict[str, Any] = field(default_factory=dict)
    llm: Any = None
    budget: Budget = field(default_factory=Budget)
    log: Callable[[str], None] = print
    run_budget: Budget = field(default_factory=Budget)   # the whole run's limits ...
    run_usage: Usage = field(default_factory=Usage)      # ... and what the run spent before this problem
    run_ledger: Any = None   # where the run's spending is shared between processes (harness/executors/ledger.py)
