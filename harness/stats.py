"""Timing statistics, computed by the judge from raw per-call times (pure functions, tested on CPU)."""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass
from statistics import median


@dataclass(frozen=True)
class TimingStats:
    median_ms: float
    iqr_ms: float
    ci_low_ms: float
    ci_high_ms: float
    mean_ms: float
    min_ms: float
    n: int
    rse: float          # relative standard error of the mean

    def to_dict(self) -> dict:
        return asdict(self)


def quantile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated quantile of an already sorted list."""
    if not sorted_values:
        raise ValueError("quantile of no values")
    position = (len(sorted_values) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    weight = position - low
    return sorted_values[low] * (1 - weight) + sorted_values[high] * weight


def relative_standard_error(values: list[float]) -> float:
    n = len(values)
    if n < 2:
        return math.inf
    mean = sum(values) / n
    if mean == 0:
        return math.inf
    variance = sum((v - mean) ** 2 for v in values) / (n - 1)
    return math.sqrt(variance / n) / mean


def bootstrap_median_ci(values: list[float], confidence: float = 0.95, resamples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the median (seeded: same times, same interval)."""
    rng = random.Random(seed)
    n = len(values)
    medians = sorted(median(rng.choices(values, k=n)) for _ in range(resamples))
    tail = (1 - confidence) / 2
    return quantile(medians, tail), quantile(medians, 1 - tail)


def summarize(times_ms: list[float]) -> TimingStats:
    if not times_ms:
        raise ValueError("no timings to summarize")
    ordered = sorted(times_ms)
    low, high = bootstrap_median_ci(ordered)
    return TimingStats(
        median_ms=quantile(ordered, 0.5),
        iqr_ms=quantile(ordered, 0.75) - quantile(ordered, 0.25),
        ci_low_ms=low,
        ci_high_ms=high,
        mean_ms=sum(ordered) / len(ordered),
        min_ms=ordered[0],
        n=len(ordered),
        rse=relative_standard_error(ordered),
    )


@dataclass(frozen=True)
class StopRule:
    """Adaptive stop: enough calls and a small relative standard error, or the budget is spent."""

    min_calls: int = 10
    max_calls: int = 200
    target_rse: float = 0.01
    budget_ms: float = 2000.0

    def done(self, times_ms: list[float], elapsed_ms: float) -> bool:
        if len(times_ms) >= self.max_calls:
            return True
        if len(times_ms) < self.min_calls:
            return False
        return elapsed_ms >= self.budget_ms or relative_standard_error(times_ms) <= self.target_rse


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """A speedup as a ratio of medians; None when either side was not measured."""
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator
