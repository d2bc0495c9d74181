"""Metrics: the one definition of every number the pytest summary, the leaderboard, the figures and
``load_runs`` users report. Pure functions over records (dicts, docs/INTERFACES.md §5) or over a
DataFrame of them (``harness.records.results.load_runs``, ``leaderboard.data.load_frame``).

The rules, fixed here once for every reader (docs/LEADERBOARD.md explains each):

- Scored records: problems the suite excludes (``excluded`` set) are kept and shown, never scored;
  records whose failure is not the model's (``NON_MODEL_STATUSES``, e.g. the endpoint was down)
  leave the problem out of that entry's denominator instead of counting as its failure.
- A flagged attempt (an integrity finding) is never correct, but still counts as an attempt.
- A board is one suite, level, device, precision, size and timer (``BOARD_KEYS``); an entry is a
  generator with its model and settings (``ENTRY_KEYS``). Repeated runs are never merged: by default
  each problem is scored from the latest run that attempted it (``runs="latest"``), or every run is
  its own entry (``runs="separate"``).
- Several attempts at one problem in one run count as samples: by default the problem scores the
  share of its attempts that pass (the unbiased pass@1, ``attempts="mean"``); best-of-k
  (``attempts="best"``) only where asked for, and then it is labelled pass@k.
- Wins are noise-aware: a candidate beats p only when the lower bound of its speedup interval is
  above p (``speedup_ci``, or a conservative interval from the timing intervals of old records); a
  speedup without any interval is no established win. fast_p is over the whole level (problems
  seen for that suite and level in every loaded run, excluded ones not counted).
- ``reference`` and ``inductor`` (and the eager and torch.compile baselines) are reference rows,
  never ranked; imported results are shown, never ranked.

Record helpers need only the standard library; frame functions import pandas and numpy when called.
Never torch.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Callable, Iterable, Sequence

FAST_P: tuple[float, ...] = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)
BASELINES = ("eager", "compile", "best")
USAGE_FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens", "cost_usd")
# Statuses whose candidate never got as far as a built module.
NOT_COMPILED = frozenset({"compile_error", "rejected"})
# Outcomes that say nothing about the model: the endpoint failed, or the harness itself did. Such a
# record leaves its problem out of the entry's denominator (the one place that decides this).
NON_MODEL_STATUSES = frozenset({"endpoint_error", "harness_error"})
NON_MODEL_FIELDS = ("endpoint_error",)  # a truthy field of this name marks the same
# Generators that are baselines, not contestants: shown as reference rows, never ranked.
REFERENCE_GENERATORS = frozenset({"reference", "inductor"})
BOARD_KEYS = ("suite", "level", "hardware", "precision", "size", "timer")
ENTRY_KEYS = ("generator", "model", "settings")
RUN_MODES = ("latest", "separate")
ATTEMPT_MODES = ("mean", "best")
WIN_MODES = ("interval", "point")
# Interval fields of a record: [lo, hi]. Loaders may split them into <name>_lo and <name>_hi.
CI_FIELDS = ("speedup_ci", "speedup_compile_ci", "candidate_ms_ci", "eager_ms_ci", "compile_ms_ci")


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


def is_non_model(record: dict) -> bool:
    """A failure that is not the model's (``NON_MODEL_STATUSES`` or a ``NON_MODEL_FIELDS`` flag)."""
    return record.get("status") in NON_MODEL_STATUSES or any(truthy(record.get(f)) for f in NON_MODEL_FIELDS)


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


def interval(record: dict, name: str) -> tuple[float, float] | None:
    """``record[name]`` as (lo, hi), or None when missing or malformed."""
    value = record.get(name)
    if hasattr(value, "tolist") and not isinstance(value, str):
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    low, high = number(value[0]), number(value[1])
    return None if low is None or high is None else (low, high)


def speedup_low(record: dict, baseline: str = "eager") -> float | None:
    """The lower bound of the attempt's speedup interval against ``baseline``: ``speedup_ci`` (or
    ``speedup_compile_ci``) where measured in alternation, else the conservative ratio of the
    timing intervals (baseline's low over the candidate's high); None: no established win."""
    lows = [_low(record, kind) for kind in (("eager", "compile") if baseline == "best" else (baseline,))]
    if baseline == "best":
        measured = [k for k in ("speedup", "speedup_compile") if number(record.get(k)) is not None]
        lows = [low for low, key in zip(lows, ("speedup", "speedup_compile")) if key in measured]
        return None if not lows or any(low is None for low in lows) else min(lows)
    return lows[0]


def _low(record: dict, kind: str) -> float | None:
    direct = interval(record, "speedup_ci" if kind == "eager" else "speedup_compile_ci")
    if direct is not None:
        return direct[0]
    base, candidate = interval(record, f"{kind}_ms_ci"), interval(record, "candidate_ms_ci")
    if base is None or candidate is None or candidate[1] <= 0:
        return None
    return base[0] / candidate[1]


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



def sum_optional(values: Iterable) -> float | None:
    """The sum of the values that are not None; None when all are."""
    kept = [value for value in values if value is not None]
    return sum(kept) if kept else None



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



def group_records(records: Iterable[dict], keys: Sequence[str]) -> dict[tuple, list[dict]]:
    """Records bucketed by the values of ``keys`` (missing values become None)."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for record in records:
        groups[tuple(_key_value(record.get(key)) for key in keys)].append(record)
    return dict(groups)


def _key_value(value):
    return None if isinstance(value, float) and math.isnan(value) else value


# ---- Frames: the same rules, vectorised, for the leaderboard and load_runs users ----

def _series(frame, name, default=None):
    import pandas as pd

    return frame[name] if name in frame.columns else pd.Series(default, index=frame.index, dtype=object)


def _floats(frame, name):
    import pandas as pd

    if name not in frame.columns:
        return pd.Series(float("nan"), index=frame.index)
    return pd.to_numeric(frame[name], errors="coerce").astype(float)


def _bools(frame, name):
    if name not in frame.columns:
        return _floats(frame, name).notna()  # all False
    column = frame[name]
    if column.dtype == bool:
        return column
    return column.map(truthy).astype(bool)


def _bounds(frame, name):
    """(lo, hi) float Series of an interval field, from ``<name>_lo/_hi`` columns or [lo, hi] lists."""
    import pandas as pd

    if f"{name}_lo" in frame.columns:
        return _floats(frame, f"{name}_lo"), _floats(frame, f"{name}_hi")
    nan = float("nan")
    pairs = [interval({name: v}, name) or (nan, nan) for v in _series(frame, name)]
    return (pd.Series([p[0] for p in pairs], index=frame.index, dtype=float),
            pd.Series([p[1] for p in pairs], index=frame.index, dtype=float))


def _key(series):
    """A grouping key that keeps missing values as their own group, the same in every frame."""
    return series.astype(object).where(series.notna(), MISSING).astype(str)


MISSING = "\u2205"


def group_codes(frame, keys: Sequence[str]):
    """One small integer per distinct combination of the ``keys`` columns (a missing value is a
    group of its own): grouping on it is much faster than on several object columns."""
    import numpy as np
    import pandas as pd

    code = np.zeros(len(frame), dtype=np.int64)
    for key in keys:
        values, uniques = pd.factorize(_series(frame, key), use_na_sentinel=False)
        code, _ = pd.factorize(code * (len(uniques) + 1) + values)
    return code


def _excluded(frame):
    column = _series(frame, "excluded")
    given = column.notna()
    if not given.any():
        return given
    text = column[given].astype(str).str.strip().str.lower()
    excluded = given.copy()
    excluded[given] = ~text.isin(["", "nan", "none", "false"])
    return excluded


def _usage(frame, name):
    if name in frame.columns:
        return _floats(frame, name)
    import pandas as pd

    values = [number(u.get(name)) if isinstance(u, dict) else None for u in _series(frame, "usage")]
    return pd.Series(values, index=frame.index, dtype=float)


def attempt_frame(frame, baseline: str = "eager", wins: str = "interval"):
    """One row per record with the columns every aggregate needs: ``ok`` (correct and unflagged),
    ``scored`` (not excluded, not a non-model failure), ``speedup`` and ``low`` (the lower bound of
    its interval) against ``baseline``, and the board and entry keys."""
    import numpy as np

    if baseline not in BASELINES:
        raise ValueError(f"unknown speedup baseline {baseline!r}; use one of {BASELINES}")
    if wins not in WIN_MODES:
        raise ValueError(f"unknown win rule {wins!r}; use one of {WIN_MODES}")
    import pandas as pd

    names = BOARD_KEYS + ENTRY_KEYS + ("problem_id", "run_id", "run_created", "run_commit", "attempt", "status")
    out = pd.DataFrame({name: _series(frame, name) for name in names}, index=frame.index)
    out["problem_id"] = out["problem_id"].astype(str)
    flagged = frame["flagged"] if "flagged" in frame.columns else _series(frame, "flags").map(lambda f: bool(flags_of({"flags": f})))
    out["flagged"] = flagged.astype(bool)
    out["excluded"] = _excluded(frame)
    non_model = out["status"].isin(NON_MODEL_STATUSES)
    for name in NON_MODEL_FIELDS:
        non_model |= _bools(frame, name)
    out["scored"] = ~out["excluded"] & ~non_model
    out["ok"] = _bools(frame, "correct") & ~out["flagged"] & out["scored"]
    out["imported"] = _bools(frame, "imported")
    given = _series(frame, "compiled")
    compiled = out["status"].notna() & ~out["status"].isin(NOT_COMPILED)
    if given.notna().any():  # imported records say so directly
        compiled = given.map(truthy).where(given.notna(), compiled).astype(bool)
    out["compiled"] = compiled & out["scored"]
    eager, compile_ = _floats(frame, "speedup"), _floats(frame, "speedup_compile")
    lows = {kind: _low_bounds(frame, kind) for kind in ("eager", "compile")}
    if baseline == "eager":
        speed, low = eager, lows["eager"]
    elif baseline == "compile":
        speed, low = compile_, lows["compile"]
    else:
        speed = np.fmin(eager, compile_)
        both = eager.notna() & compile_.notna()
        low = np.minimum(lows["eager"], lows["compile"]).where(both, lows["eager"].where(eager.notna(), lows["compile"]))
    out["speedup"] = speed.where(out["ok"])
    out["low"] = (speed if wins == "point" else low).where(out["ok"] & speed.notna())
    out["sol_fraction"] = _floats(frame, "sol_fraction").where(out["ok"])
    out["tokens"] = _usage(frame, "input_tokens") + _usage(frame, "output_tokens")
    out["cost_usd"] = _usage(frame, "cost_usd")
    for name in ("eager_ms", "compile_ms"):
        out[name] = _floats(frame, name)
        out[f"{name}_lo"], out[f"{name}_hi"] = _bounds(frame, f"{name}_ci")
    return out


def _low_bounds(frame, kind: str):
    direct, _ = _bounds(frame, "speedup_ci" if kind == "eager" else "speedup_compile_ci")
    base_low, _ = _bounds(frame, f"{kind}_ms_ci")
    _, candidate_high = _bounds(frame, "candidate_ms_ci")
    derived = (base_low / candidate_high).where(candidate_high > 0)
    return direct.where(direct.notna(), derived)


def select_runs(attempts, runs: str = "latest"):
    """Never merge runs: keep, per board, entry and problem, the records of the latest run that
    attempted it (``latest``), or keep every run as its own entry (``separate``: add ``run_id``
    to the entry keys)."""
    import numpy as np
    import pandas as pd

    if runs not in RUN_MODES:
        raise ValueError(f"unknown run rule {runs!r}; use one of {RUN_MODES}")
    if runs == "separate" or attempts.empty:
        return attempts
    runs_code = group_codes(attempts, ["run_created", "run_id"])
    first = pd.Series(np.arange(len(attempts))).groupby(runs_code).first()
    order = sorted(first.index, key=lambda c: tuple(str(attempts[k].iat[first[c]]) for k in ("run_created", "run_id")))
    rank = np.empty(len(order), dtype=np.int64)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(len(order))
    row_rank = pd.Series(rank[runs_code], index=attempts.index)
    problem = group_codes(attempts, list(BOARD_KEYS + ENTRY_KEYS) + ["problem_id"])
    return attempts[row_rank == row_rank.groupby(problem).transform("max")]


def entry_keys(runs: str = "latest") -> list[str]:
    return list(BOARD_KEYS + ENTRY_KEYS) + (["run_id"] if runs == "separate" else [])


def problem_table(attempts, keys: Sequence[str], mode: str = "mean", ps: Iterable[float] = FAST_P):
    """One row per (keys, problem): ``n`` scored attempts, ``correct`` and ``win_<p>`` as shares
    of them (``mean``) or as best-of-k 0/1 (``best``), ``log_speedup`` and ``sol_fraction``."""
    import numpy as np
    import pandas as pd

    if mode not in ATTEMPT_MODES:
        raise ValueError(f"unknown attempt rule {mode!r}; use one of {ATTEMPT_MODES}")
    kept = attempts[~attempts["excluded"]]
    parts = {"n": kept["scored"].astype(float), "c": kept["ok"].astype(float),
             "log_speedup": np.log(kept["speedup"].where(kept["speedup"] > 0)),
             "timed": (kept["ok"] & kept["speedup"].notna()).astype(float),
             "sol_fraction": kept["sol_fraction"], "compiled": kept["compiled"].astype(float),
             "tokens": kept["tokens"], "cost_usd": kept["cost_usd"],
             "flagged": (kept["flagged"] & kept["scored"]).astype(float), "records": 1.0,
             "imported": kept["imported"].astype(float)}
    wins = [float(p) for p in ps if p > 0]
    low = kept["low"].to_numpy()
    parts.update({f"w_{p:g}": (low > p).astype(float) for p in wins})
    table = pd.concat([kept[list(keys) + ["problem_id"]], pd.DataFrame(parts, index=kept.index)], axis=1)
    table["entry_code"] = group_codes(table, keys)
    grouped = table.groupby(group_codes(table, ["entry_code", "problem_id"]), sort=False)
    pick = "mean" if mode == "mean" else "max"
    summed = grouped[["n", "c", "timed", "compiled", "flagged", "records"]].sum()
    spread = grouped[["log_speedup", "sol_fraction"] + [f"w_{p:g}" for p in wins]].agg(pick)
    result = summed.join(spread).join(grouped[["tokens", "cost_usd"]].sum(min_count=1))
    result = result.join(grouped[list(keys) + ["problem_id", "entry_code", "imported"]].agg(
        {**{k: "first" for k in keys}, "problem_id": "first", "entry_code": "first", "imported": "max"}))
    scored = result["n"].where(result["n"] > 0)
    if mode == "mean":  # shares of scored attempts: wins were summed per attempt, so divide
        counts = grouped[[f"w_{p:g}" for p in wins]].sum()
        shares = {f"win_{p:g}": (counts[f"w_{p:g}"] / scored).fillna(0.0) for p in wins}
        shares["correct"] = (result["c"] / scored).fillna(0.0)
    else:
        shares = {f"win_{p:g}": result[f"w_{p:g}"].fillna(0.0) for p in wins}
        shares["correct"] = (result["c"] > 0).astype(float)
    result = pd.concat([result.drop(columns=[f"w_{p:g}" for p in wins]), pd.DataFrame(shares)], axis=1)
    result["compiled"] = (result["compiled"] / result["n"].where(result["n"] > 0)).fillna(0.0)
    return result.reset_index(drop=True)


def level_sizes(frame) -> dict[tuple, int]:
    """Scored problems per (suite, level) over every loaded record: the fast_p denominator, so
    problems a generator skipped count against it."""
    if frame.empty:
        return {}
    kept = frame[~_excluded(frame)]
    suite, level = _key(_series(kept, "suite")), _key(_series(kept, "level"))
    sizes = _series(kept, "problem_id").groupby([suite, level]).nunique()
    return {key: int(size) for key, size in sizes.items()}


def _size_key(suite, level) -> tuple:
    missing = lambda v: v is None or v is MISSING or (isinstance(v, float) and math.isnan(v)) or str(v) == "<NA>"  # noqa: E731
    return tuple(MISSING if missing(v) else str(v) for v in (suite, level))


def entry_table(problems, keys: Sequence[str], sizes: dict | None = None, ps: Iterable[float] = FAST_P):
    """One row per entry (``keys``) from ``problem_table``: ``problems`` (the level's size less the
    problems this entry only failed for reasons not its model's), ``attempted``, ``correct``,
    ``correctness``, ``fast_<p>``, ``geomean_speedup``, ``median_sol_fraction``, cost and counts."""
    import numpy as np
    import pandas as pd

    wins = [f"win_{float(p):g}" for p in ps if p > 0]
    problems = problems.assign(attempted=(problems["n"] > 0).astype(int), non_model_only=(problems["n"] == 0).astype(int))
    codes = problems["entry_code"] if "entry_code" in problems else group_codes(problems, keys)
    grouped = problems.groupby(codes, sort=False)
    sums = grouped[["attempted", "non_model_only", "correct", "compiled", "flagged", "records", *wins]].sum()
    table = grouped[list(keys) + ["entry_code"]].first() if "entry_code" in problems else grouped[list(keys)].first()
    table = table.assign(
        attempted=sums["attempted"], non_model_only=sums["non_model_only"], correct=sums["correct"],
        timed=grouped["log_speedup"].count(), geomean_speedup=np.exp(grouped["log_speedup"].mean()),
        median_sol_fraction=grouped["sol_fraction"].median(), compiled=sums["compiled"],
        tokens=grouped["tokens"].sum(min_count=1), cost_usd=grouped["cost_usd"].sum(min_count=1),
        flagged_records=sums["flagged"].astype(int), records=sums["records"].astype(int),
        imported=grouped["imported"].max().astype(bool))
    seen = table["attempted"] + table["non_model_only"]
    level = [max(int(n), (sizes or {}).get(_size_key(su, lv), int(n)))
             for n, su, lv in zip(seen, _column_or_none(table, "suite"), _column_or_none(table, "level"))]
    table["problems"] = np.maximum(np.asarray(level) - table["non_model_only"], table["attempted"])
    total = table["problems"].where(table["problems"] > 0)
    unmeasured = (table["correct"] > 0) & (table["timed"] == 0)  # CPU: speed not measured, not zero
    attempted, correct = table["attempted"].where(table["attempted"] > 0), table["correct"].where(table["correct"] > 0)
    derived = {
        "correctness": table["correct"] / total, "fast_0": table["correct"] / total,
        "geomean_speedup": table["geomean_speedup"].where(table["timed"] > 0),
        "compile_rate": table["compiled"] / total,
        "tokens_per_problem": table["tokens"] / attempted, "cost_per_problem": table["cost_usd"] / attempted,
        "tokens_per_correct": table["tokens"] / correct, "cost_per_correct": table["cost_usd"] / correct,
        **{"fast_" + w[4:]: (sums[w] / total).mask(unmeasured) for w in wins},
    }
    table = table.drop(columns=["geomean_speedup"])
    return pd.concat([table, pd.DataFrame(derived, index=table.index)], axis=1).reset_index(drop=True)


def _column_or_none(table, name):
    return table[name] if name in table.columns else [None] * len(table)


def level_summary(records: Iterable[dict], baseline: str = "eager", ps: Iterable[float] = FAST_P,
                  total_problems: int | None = None, attempts: str = "mean", wins: str = "interval") -> dict:
    """Every headline number for one group of records (a level of one generator, typically), by
    the rules above. ``total_problems`` sets the level's size (problems with no record at all
    still count as failures); by default it is the number of distinct scored problems seen."""
    import pandas as pd

    frame = pd.DataFrame([dict(r) for r in records])
    ps = tuple(ps)
    if frame.empty or "problem_id" not in frame.columns:
        frame = pd.DataFrame({"problem_id": pd.Series([], dtype=object)})
    shown = attempt_frame(frame, baseline, wins)
    shown = select_runs(shown.assign(**{k: None for k in BOARD_KEYS + ENTRY_KEYS}))
    problems = problem_table(shown, ["suite"], attempts, ps)
    seen = int((problems["n"] > 0).sum() + (problems["n"] == 0).sum())
    sizes = {_size_key(None, None): total_problems if total_problems is not None else seen}
    rows = entry_table(problems, ["suite"], sizes, ps).to_dict("records") if len(problems) else []
    return _summary_dict(rows[0] if rows else None, problems, len(shown), ps, sizes[_size_key(None, None)])


def _summary_dict(row: dict | None, problems, records: int, ps, size: int) -> dict:
    value = lambda name: None if row is None else number(row.get(name))  # noqa: E731
    curve = {float(p): (value("correctness") if p <= 0 else value(f"fast_{float(p):g}")) for p in ps}
    correct = value("correct") or 0.0
    tried = [(int(n), int(c)) for n, c in zip(problems["n"], problems["c"]) if n > 0]
    most = min((n for n, _ in tried), default=0)
    tokens, cost = value("tokens"), value("cost_usd")
    return {
        "problems": int(value("problems") or size), "attempts": records,
        "attempted": int(value("attempted") or 0),
        "correct": int(correct) if float(correct).is_integer() else correct,
        "compiled": value("compiled") or 0.0, "flagged_records": int(value("flagged_records") or 0),
        "correctness_rate": value("correctness") if row else (0.0 if size else None),
        "compile_rate": value("compile_rate"), "geomean_speedup": value("geomean_speedup"),
        "speed_measured": int(value("timed") or 0), "fast_p": curve, "fast_1": curve.get(1.0),
        "median_sol_fraction": value("median_sol_fraction"),
        "pass_at_k": {k: sum(pass_at_k(n, c, k) for n, c in tried) / len(tried) for k in range(1, most + 1)},
        "tokens": tokens, "cost_usd": cost, "tokens_per_problem": value("tokens_per_problem"),
        "tokens_per_correct": value("tokens_per_correct"), "cost_per_problem": value("cost_per_problem"),
        "cost_per_correct": value("cost_per_correct"),
    }
