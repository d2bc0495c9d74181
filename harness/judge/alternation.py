"""Speedup as a ratio: the candidate and its baselines timed in alternation, round by round.

Launch-bound models' times drift by up to 2x within minutes on a shared host (clock changes, host
load, other tenants), whoever times them, so two times taken one after the other cannot be
compared. Each round times one short batch per role back to back, on the same input sets, and the
round's ratio (baseline median over candidate median) cancels whatever the round shares. The
roles' order rotates every round (C E, E C, ...; with three roles every role takes every place), so
that going first or last decides nothing. The speedup is the median of the rounds' ratios, with a
bootstrap interval over rounds; rounds stop once every interval is narrow enough or the budget is
spent (harness.records.stats.StopRule).

This module is the loop alone: what a batch is (a worker request, a check of its outputs) is the
caller's ``time_batch``, so the loop is tested on the CPU with a scripted clock.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from statistics import median
from typing import Callable

from harness.records import stats

CANDIDATE = "candidate"


class RoleFailed(Exception):
    """A role's batch failed: ``status`` and ``reason`` are the verdict's."""

    def __init__(self, role: str, status: str, reason: str):
        super().__init__(f"{role}: {status}: {reason}")
        self.role, self.status, self.reason = role, status, reason


@dataclass
class Rounds:
    """What the rounds measured: every role's batch times, each baseline's per-round ratios and
    their summary, the order each round ran in, why the rounds stopped, and failed baselines."""

    batches: dict[str, list[list[float]]] = field(default_factory=dict)
    ratios: dict[str, list[float]] = field(default_factory=dict)
    stats: dict[str, stats.RatioStats] = field(default_factory=dict)
    orders: list[tuple[str, ...]] = field(default_factory=list)
    stopped: str = ""
    failed: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def rounds(self) -> int:
        return len(self.orders)

    def times(self, role: str) -> list[float]:
        return [t for batch in self.batches.get(role, []) for t in batch]


def round_order(roles: list[str], number: int) -> tuple[str, ...]:
    """Round ``number``'s order: the roles rotated by one place each round."""
    shift = number % len(roles)
    return tuple(roles[shift:] + roles[:shift])


def calls_per_batch(typical_ms: float, batch_ms: float, most: int) -> int:
    """Calls in each role's batch: about ``batch_ms`` of calls, at least one, at most ``most``.
    Short batches keep a round's two sides close in time; a few calls amortise the request."""
    if typical_ms <= 0:
        return most
    return max(1, min(most, int(batch_ms / typical_ms)))


def run_rounds(roles: list[str], time_batch: Callable[[str, int, int], list[float]], calls: int,
               rule: stats.StopRule, clock: Callable[[], float] = time.perf_counter) -> Rounds:
    """Alternate ``roles`` (the candidate first) until ``rule`` says stop.

    ``time_batch(role, round, calls)`` times one batch and returns its per-call times (ms), or
    raises RoleFailed. A failed baseline leaves the rounds (its failure kept in ``failed``); a
    failed candidate ends them, and the failure goes to the caller.
    """
    result = Rounds(batches={role: [] for role in roles})
    live = list(roles)
    started = clock()
    while True:
        order = round_order(live, result.rounds)
        timed: dict[str, list[float]] = {}
        for role in order:
            try:
                timed[role] = time_batch(role, result.rounds, calls)
            except RoleFailed as failure:
                if role == CANDIDATE:
                    raise
                result.failed[role] = (failure.status, failure.reason)
        result.orders.append(order)
        live = [role for role in live if role not in result.failed]
        for role, times in timed.items():
            if role in live:
                result.batches[role].append(times)
        _add_ratios(result, timed, live)
        current = [_summary(result.ratios[role], resamples=400) for role in live if role != CANDIDATE]
        result.stopped = rule.done(current, result.rounds, 1e3 * (clock() - started)) or ""
        if result.stopped or len(live) == 1:
            result.stopped = result.stopped or "no_baseline_left"
            break
    for role in result.failed:
        result.batches.pop(role, None)
        result.ratios.pop(role, None)
    result.stats = {role: _summary(ratios) for role, ratios in result.ratios.items()}
    return result


def _add_ratios(result: Rounds, timed: dict[str, list[float]], live: list[str]) -> None:
    candidate = median(timed[CANDIDATE])
    for role in live:
        if role != CANDIDATE:
            baseline = median(timed[role])
            result.ratios.setdefault(role, []).append(baseline / candidate if candidate > 0 else float("inf"))


def _summary(ratios: list[float], resamples: int = 2000) -> stats.RatioStats:
    return stats.ratio_stats(ratios, resamples=resamples)
