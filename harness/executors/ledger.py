"""The run's shared spending: one ledger for every process of a distributed run.

Locally, a run's token and dollar limits are checked before each LLM call against what the run
spent so far, so a run ends at most one call over its limit. When problems run at once on several
nodes, each call asks the ledger first (``acquire``) and reports what it cost after (``release``).
The ledger lets calls run side by side only while the limit would hold even if each of them cost
as much as the largest call seen so far; otherwise a call waits for the others to report, and once
the run is over a limit no call starts. So a distributed run, too, ends at most about one call
over its limit, whatever the number of nodes. The endpoint's limit on calls in flight
(``CRUCIBLE_LLM_CONCURRENCY``, per process locally) is held here for the whole run as well.

``RunLedger`` is plain Python: the Ray executor makes it an actor (harness/executors/ray_state.py).
"""

from __future__ import annotations

from harness.candidate import Budget
from harness.records.usage import Usage

GO, WAIT, STOP = "go", "wait", "stop"


class RunLedger:
    def __init__(self, run_budget: Budget | None = None, spent: dict | None = None, max_concurrency: int | None = None):
        self.budget = run_budget or Budget()
        self.max_concurrency = max_concurrency
        self.total = Usage.from_dict(spent)
        self.outstanding: dict[str, int] = {}   # calls under way, per problem's task
        self.largest = Usage()   # the largest single call reported, per limit
        self.calls = 0
        self.starts: dict[str, int] = {}

    def spent(self) -> dict:
        return self.total.to_dict()

    def acquire(self, key: str) -> tuple[str, str | None]:
        """(GO, None): call now; (WAIT, None): ask again shortly; (STOP, reason): the run's limit is spent."""
        reason = self.budget.exceeded_by(self.total)
        if reason:
            return STOP, f"run {reason}"
        under_way = sum(self.outstanding.values())
        if self.max_concurrency is not None and under_way >= self.max_concurrency:
            return WAIT, None
        if under_way == 0 or self._fits(under_way + 1):
            self.outstanding[key] = self.outstanding.get(key, 0) + 1
            return GO, None
        return WAIT, None

    def _fits(self, calls: int) -> bool:
        """Would the limits hold if ``calls`` calls each cost as much as the largest one seen?"""
        if self.budget.max_tokens is None and self.budget.max_cost_usd is None:
            return True
        if self.calls == 0:
            return False  # nothing known yet about what a call costs: one at a time
        tokens = self.total.total_tokens + calls * self.largest.total_tokens
        cost = self.total.cost_usd + calls * self.largest.cost_usd
        return ((self.budget.max_tokens is None or tokens <= self.budget.max_tokens)
                and (self.budget.max_cost_usd is None or cost <= self.budget.max_cost_usd))

    def release(self, key: str, usage: dict | None) -> None:
        used = Usage.from_dict(usage)
        self.total = self.total + used
        self.outstanding[key] = max(0, self.outstanding.get(key, 0) - 1)
        self.calls += 1
        self.largest = Usage(input_tokens=max(self.largest.input_tokens, used.input_tokens),
                             output_tokens=max(self.largest.output_tokens, used.output_tokens),
                             cost_usd=max(self.largest.cost_usd, used.cost_usd))

    def started(self, key: str) -> int:
        """Count one start of a problem's task; returns which start this is (1 for the first). Calls
        that an earlier start left under way died with it (a lost node): they no longer hold others back."""
        self.starts[key] = self.starts.get(key, 0) + 1
        self.forget(key)
        return self.starts[key]

    def forget(self, key: str) -> None:
        self.outstanding.pop(key, None)
