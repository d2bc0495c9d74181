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
    """When alternation stops: once every speedup's interval is within +-``target_halfwidth`` of its
    median (after ``min_rounds``), or the rounds have taken ``budget_ms`` of the judge's wall clock,
    or after ``max_rounds``. Most problems need far less than the budget."""

    min_rounds: int = 8
    max_rounds: int = 200
    target_halfwidth: float = 0.01
    budget_ms: float = 2000.0

    def done(self, intervals: list["RatioStats"], rounds: int, elapsed_ms: float) -> str | None:
        """Why to stop now (``narrow``, ``budget``, ``max_rounds``), or None to go on."""
        if rounds >= self.max_rounds:
            return "max_rounds"
        if rounds < self.min_rounds:
            return None
        if all(s.halfwidth <= self.target_halfwidth for s in intervals):
            return "narrow"
        return "budget" if elapsed_ms >= self.budget_ms else None


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """A speedup as a ratio of medians; None when either side was not measured."""
    if numerator is None or denominator is None or denominator <= 0:
        return None
    return numerator / denominator


@dataclass(frozen=True)
class RatioStats:
    """A speedup measured in alternation: the median of the per-round ratios (baseline over
    candidate) and a percentile bootstrap interval of that median, over ``rounds`` rounds."""

    median: float
    ci_low: float
    ci_high: float
    rounds: int

    @property
    def halfwidth(self) -> float:
        """Half the interval's width relative to the median (0.01: the ratio known to +-1%)."""
        return (self.ci_high - self.ci_low) / (2 * self.median) if self.median > 0 else math.inf

    def to_dict(self) -> dict:
        return asdict(self)


def ratio_stats(ratios: list[float], confidence: float = 0.95, resamples: int = 2000, seed: int = 0) -> RatioStats:
    """The median per-round ratio and its bootstrap interval (seeded: same rounds, same interval).

    Rounds, not calls, are resampled: a round's two batches ran back to back, so what drifts between
    rounds (clocks, host load, other tenants) is in the spread of the rounds and nowhere else.
    """
    import numpy as np

    if not ratios:
        raise ValueError("no rounds to summarize")
    values = np.asarray(ratios, dtype=float)
    rng = np.random.default_rng(seed)
    medians = np.median(values[rng.integers(0, len(values), size=(resamples, len(values)))], axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(medians, [tail, 1 - tail])
    return RatioStats(float(np.median(values)), float(low), float(high), len(values))


FASTER, SLOWER, INDISTINGUISHABLE = "faster", "slower", "indistinguishable"


def speed_verdict(ci: tuple[float, float] | list[float] | None, threshold: float = 1.0) -> str | None:
    """``faster`` only when the whole interval lies above ``threshold``, ``slower`` when it lies
    below, else ``indistinguishable``; None when the speedup was not measured."""
    if not ci or ci[0] is None or ci[1] is None:
        return None
    if ci[0] > threshold:
        return FASTER
    if ci[1] < threshold:
        return SLOWER
    return INDISTINGUISHABLE
