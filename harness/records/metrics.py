"""Metrics as pure functions over result records, shared by the pytest summary, the leaderboard
and the figures.

A record is a dict as in docs/INTERFACES.md §5 (a row of ``harness.records.results.load_records``; NaN
from a pandas round trip reads as missing). Conventions, fixed here once for every reader:

- Per problem, a generator with several attempts counts as correct when any attempt is correct
  (best-of-k) and its speedup is the best correct attempt's speedup.
- A flagged attempt (an integrity finding) never counts as correct: it is an attempt whose
  correctness cannot be trusted. It still counts as an attempt (for pass@k's n and compile rate).
- fast_p = problems correct with speedup > p (strict) over all problems of the level; fast_0 is
  the correctness rate. Geomean speedup is over correct problems only.
- Speedup baselines: ``eager`` (the record's ``speedup``), ``compile`` (``speedup_compile``) or
  ``best`` (against the faster of the two, i.e. the smaller of the two ratios).

This module imports numpy and, for bootstrap intervals only, scipy; never torch or pandas.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

FAST_P: tuple[float, ...] = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)
BASELINES = ("eager", "compile", "best")
USAGE_FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens", "cost_usd")
# Statuses whose candidate never got as far as a built module.
NOT_COMPILED = frozenset({"compile_error", "rejected"})
# The status of an attempt the LLM endpoint failed (harness.executors.runner): never the model's outcome.
ENDPOINT_ERROR = "endpoint_error"


def number(value) -> float | None:
    """A finite float, or None for missing, NaN, infinite and non-numeric values."""
    if type(value) is float:  # the common case, fast
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, bool):
        return None
    try:
        result = float(value)
    except (TypeError, ValueError):
        return None
    return result if math.isfinite(result) else None


def flags_of(record: dict) -> list[str]:
    flags = record.get("flags")
    if flags is None or type(flags) is float or len(flags) == 0:  # missing, NaN, empty: the common cases
        return []
    if hasattr(flags, "tolist") and not isinstance(flags, str):  # a numpy array from pandas/arrow
        flags = flags.tolist()
    if isinstance(flags, (list, tuple)):
        return [str(flag) for flag in flags]
    if isinstance(flags, str) and flags:
        return [flags]
    return []


def truthy(value) -> bool:
    """A boolean field read tolerantly: numpy booleans count, NaN and None (missing) are false."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    return bool(value)


def is_imported(record: dict) -> bool:
    return truthy(record.get("imported"))


def is_excluded(record: dict) -> bool:
    """A problem the suite excludes (its reason is in the record): kept and shown, never scored."""
    value = record.get("excluded")
    return isinstance(value, str) and bool(value.strip()) and value.lower() not in ("nan", "none")


def is_ranked(record: dict) -> bool:
    """Ranked results are unflagged, produced by Crucible itself (not imported), on a scored problem."""
    return not flags_of(record) and not is_imported(record) and not is_excluded(record)


def attempt_correct(record: dict) -> bool:
    return truthy(record.get("correct")) and not flags_of(record)


def attempt_compiled(record: dict) -> bool:
    compiled = record.get("compiled")
    if compiled is not None and not (isinstance(compiled, float) and math.isnan(compiled)):
        return truthy(compiled)  # imported records say so directly
    status = record.get("status")
    return status is not None and status not in NOT_COMPILED


def attempt_speedup(record: dict, baseline: str = "eager") -> float | None:
    if baseline not in BASELINES:
        raise ValueError(f"unknown speedup baseline {baseline!r}; use one of {BASELINES}")
    eager, compiled = number(record.get("speedup")), number(record.get("speedup_compile"))
    if baseline == "eager":
        return eager
    if baseline == "compile":
        return compiled
    measured = [value for value in (eager, compiled) if value is not None]
    return min(measured) if measured else None


def usage_of(record: dict) -> dict | None:
    """The record's usage dict, or the same fields flattened into the record (a DataFrame row)."""
    usage = record.get("usage")
    if isinstance(usage, dict):
        return usage
    if "input_tokens" not in record and "cost_usd" not in record:
        return None
    flat = {name: record.get(name) for name in USAGE_FIELDS}
    return flat if any(number(value) is not None for value in flat.values()) else None


def attempt_tokens(record: dict) -> int | None:
    usage = usage_of(record)
    if usage is None:
        return None
    return int((number(usage.get("input_tokens")) or 0) + (number(usage.get("output_tokens")) or 0))


def attempt_cost(record: dict) -> float | None:
    usage = usage_of(record)
    if usage is None:
        return None
    return number(usage.get("cost_usd")) or 0.0


@dataclass
class ProblemOutcome:
    """One problem's attempts collapsed: best-of-k correctness and the best correct speedup."""

    problem_id: str
    attempts: int = 0
    correct_attempts: int = 0
    compiled: bool = False
    flagged_attempts: int = 0
    speedup: float | None = None
    sol_fraction: float | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    flags: list[str] = field(default_factory=list)

    @property
    def correct(self) -> bool:
        return self.correct_attempts > 0


def _add_optional(total, value):
    if value is None:
        return total
    return value if total is None else total + value


def _absorb(outcome: ProblemOutcome, record: dict, baseline: str) -> None:
    outcome.attempts += 1
    outcome.compiled = outcome.compiled or attempt_compiled(record)
    usage = usage_of(record)
    if usage is not None:
        outcome.tokens = (outcome.tokens or 0) + int((number(usage.get("input_tokens")) or 0)
                                                     + (number(usage.get("output_tokens")) or 0))
        outcome.cost_usd = (outcome.cost_usd or 0.0) + (number(usage.get("cost_usd")) or 0.0)
    flags = flags_of(record)
    if flags:
        outcome.flagged_attempts += 1
        outcome.flags.extend(flag for flag in flags if flag not in outcome.flags)
        return  # a flagged attempt is never correct
    if not truthy(record.get("correct")):
        return
    outcome.correct_attempts += 1
    speedup = attempt_speedup(record, baseline)
    if speedup is not None and (outcome.speedup is None or speedup > outcome.speedup):
        outcome.speedup = speedup
        outcome.sol_fraction = number(record.get("sol_fraction"))
    elif outcome.speedup is None and outcome.sol_fraction is None:
        outcome.sol_fraction = number(record.get("sol_fraction"))


def problem_outcomes(records: Iterable[dict], baseline: str = "eager") -> list[ProblemOutcome]:
    """Records grouped by ``problem_id`` (one generator's attempts) into outcomes, in id order."""
    outcomes: dict[str, ProblemOutcome] = {}
    for record in records:
        if is_excluded(record):
            continue  # the suite's manifest says this problem cannot be judged fairly (EXCLUDED.md)
        if record.get("status") == ENDPOINT_ERROR:
            continue  # the LLM endpoint failed, not the model: no measurement of the model
        problem_id = str(record.get("problem_id"))
        outcome = outcomes.setdefault(problem_id, ProblemOutcome(problem_id))
        _absorb(outcome, record, baseline)
    return [outcomes[key] for key in sorted(outcomes)]


def geomean(values: Iterable[float | None]) -> float | None:
    """Geometric mean of the positive finite values; None when there are none."""
    logs = [math.log(v) for v in map(number, values) if v is not None and v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else None


def median(values: Iterable[float | None]) -> float | None:
    kept = sorted(v for v in map(number, values) if v is not None)
    if not kept:
        return None
    middle = len(kept) // 2
    return kept[middle] if len(kept) % 2 else (kept[middle - 1] + kept[middle]) / 2


def fast_p(outcomes: Sequence[ProblemOutcome], p: float, total_problems: int | None = None) -> float | None:
    """Share of the level's problems that are correct with speedup strictly above ``p``.

    fast_0 is the correctness rate (a correct kernel's speedup is positive whether or not it was
    measured). For p > 0, None when correct kernels exist but none had its speed measured (CPU
    runs through Triton's interpreter): a zero there would be a false statement.
    """
    total = total_problems if total_problems is not None else len(outcomes)
    if total <= 0:
        return None
    correct = [o for o in outcomes if o.correct]
    if p <= 0:
        return len(correct) / total
    measured = [o.speedup for o in correct if o.speedup is not None]
    if correct and not measured:
        return None
    return sum(1 for speedup in measured if speedup > p) / total


def fast_p_curve(outcomes, ps: Iterable[float] = FAST_P, total_problems: int | None = None) -> dict[float, float | None]:
    return {float(p): fast_p(outcomes, p, total_problems) for p in ps}


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass@k from n samples of which c are correct: 1 - C(n-c, k) / C(n, k).

    Computed as a running product so large n does not overflow; None when n < k (undefined).
    """
    if k <= 0 or n < k:
        return None
    if n - c < k:
        return 1.0
    miss = 1.0
    for i in range(n - c + 1, n + 1):
        miss *= 1.0 - k / i
    return 1.0 - miss


def mean_pass_at_k(outcomes: Sequence[ProblemOutcome], k: int) -> float | None:
    """pass@k averaged over problems; None unless every problem has at least k attempts."""
    values = [pass_at_k(o.attempts, o.correct_attempts, k) for o in outcomes]
    if not values or any(value is None for value in values):
        return None
    return sum(values) / len(values)


def _per(total, count: int):
    return None if total is None or count <= 0 else total / count


def cost_summary(outcomes: Sequence[ProblemOutcome]) -> dict:
    """Tokens and dollars per problem and per correct kernel (None when usage was not recorded)."""
    tokens = sum_optional(o.tokens for o in outcomes)
    cost = sum_optional(o.cost_usd for o in outcomes)
    correct = sum(1 for o in outcomes if o.correct)
    return {
        "tokens": tokens,
        "cost_usd": cost,
        "tokens_per_problem": _per(tokens, len(outcomes)),
        "tokens_per_correct": _per(tokens, correct),
        "cost_per_problem": _per(cost, len(outcomes)),
        "cost_per_correct": _per(cost, correct),
    }


def sum_optional(values: Iterable) -> float | None:
    total = None
    for value in values:
        total = _add_optional(total, value)
    return total


def level_summary(
    records: Iterable[dict],
    baseline: str = "eager",
    ps: Iterable[float] = FAST_P,
    total_problems: int | None = None,
) -> dict:
    """Every headline number for one group of records (a level of one generator, typically).

    ``total_problems`` overrides the denominator (problems of the level that produced no record
    at all still count as failures); by default it is the number of distinct problems seen.
    """
    records = list(records)
    outcomes = problem_outcomes(records, baseline)
    problems = total_problems if total_problems is not None else len(outcomes)
    correct = [o for o in outcomes if o.correct]
    curve = fast_p_curve(outcomes, ps, problems)
    max_attempts = min((o.attempts for o in outcomes), default=0)
    return {
        "problems": problems,
        "attempts": len(records),
        "correct": len(correct),
        "compiled": sum(1 for o in outcomes if o.compiled),
        "flagged_records": sum(o.flagged_attempts for o in outcomes),
        "correctness_rate": _per(len(correct), problems),
        "compile_rate": _per(sum(1 for o in outcomes if o.compiled), problems),
        "geomean_speedup": geomean(o.speedup for o in correct),
        "speed_measured": sum(1 for o in correct if o.speedup is not None),
        "fast_p": curve,
        "fast_1": curve.get(1.0, fast_p(outcomes, 1.0, problems)),
        "median_sol_fraction": median(o.sol_fraction for o in correct),
        "pass_at_k": {k: mean_pass_at_k(outcomes, k) for k in range(1, max_attempts + 1)},
        **cost_summary(outcomes),
    }


def bootstrap_ci(
    values: Sequence[float],
    statistic: str | Callable = "mean",
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float] | None:
    """A bootstrap confidence interval (scipy, BCa with a percentile fallback), seeded so the
    same inputs always give the same interval. ``statistic``: "mean", "geomean" or a callable
    reducing a 1-D array (``axis`` keyword supported). None for fewer than two values."""
    import numpy as np
    from scipy import stats

    data = np.asarray([v for v in map(number, values) if v is not None], dtype=float)
    if data.size < 2:
        return None
    if np.all(data == data[0]):
        return (float(data[0]), float(data[0]))  # no spread: every resample gives the same value
    function = _statistic(statistic, np)
    for method in ("BCa", "percentile"):
        result = stats.bootstrap((data,), function, confidence_level=confidence, n_resamples=n_resamples,
                                 method=method, rng=np.random.default_rng(seed), vectorized=True)
        low, high = result.confidence_interval
        if math.isfinite(low) and math.isfinite(high):
            return (float(low), float(high))
    return None


def _statistic(statistic, np):
    if callable(statistic):
        return statistic
    if statistic == "mean":
        return lambda sample, axis=-1: np.mean(sample, axis=axis)
    if statistic == "geomean":
        return lambda sample, axis=-1: np.exp(np.mean(np.log(sample), axis=axis))
    raise ValueError(f"unknown statistic {statistic!r}; use 'mean', 'geomean' or a callable")


def geomean_ci(outcomes: Sequence[ProblemOutcome], **options) -> tuple[float, float] | None:
    """Bootstrap interval of the geomean speedup over correct problems."""
    speedups = [o.speedup for o in outcomes if o.correct and o.speedup is not None and o.speedup > 0]
    return bootstrap_ci(speedups, "geomean", **options)


def fast_p_ci(outcomes: Sequence[ProblemOutcome], p: float, **options) -> tuple[float, float] | None:
    """Bootstrap interval of fast_p, resampling the level's problems (0/1 per problem)."""
    if p <= 0:
        hits = [1.0 if o.correct else 0.0 for o in outcomes]
    else:
        hits = [1.0 if o.correct and o.speedup is not None and o.speedup > p else 0.0 for o in outcomes]
    return bootstrap_ci(hits, "mean", **options)


def group_records(records: Iterable[dict], keys: Sequence[str]) -> dict[tuple, list[dict]]:
    """Records bucketed by the values of ``keys`` (missing values become None)."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for record in records:
        groups[tuple(_key_value(record.get(key)) for key in keys)].append(record)
    return dict(groups)


def _key_value(value):
    return None if isinstance(value, float) and math.isnan(value) else value
