"""Tables formatted for people: percentages, 'x' speedups, dollars, and a dash for 'not measured'."""

from __future__ import annotations

import math

import pandas as pd

DASH = "—"


def missing(value) -> bool:
    if value is None or value is pd.NA:
        return True
    return isinstance(value, float) and math.isnan(value)


def percent(value) -> str:
    return DASH if missing(value) else f"{100 * float(value):.1f}%"


def times(value) -> str:
    return DASH if missing(value) else f"{float(value):.2f}x"


def dollars(value) -> str:
    if missing(value):
        return DASH
    value = float(value)
    return f"${value:.4f}" if value < 0.1 else f"${value:.2f}"


def count(value) -> str:
    return DASH if missing(value) else f"{float(value):,.0f}"


def with_interval(text: str, interval, fmt) -> str:
    """``1.40x [1.21x, 1.62x]``; the bare value when there is no interval or it has no width."""
    if not isinstance(interval, (tuple, list)) or missing(interval[0]) or missing(interval[1]):
        return text
    if fmt(interval[0]) == fmt(interval[1]):
        return text
    return f"{text} [{fmt(interval[0])}, {fmt(interval[1])}]"


def board_title(suite, level, hardware, precision, size=None, timer=None) -> str:
    level_text = DASH if missing(level) else f"Level {level}"
    parts = [suite, level_text, hardware, precision, None if missing(size) else f"size {size}",
             None if missing(timer) else f"timer {timer}"]
    return " · ".join(str(part) for part in parts if not missing(part))


def amount(value) -> str:
    """A count that may be a share of attempts (the unbiased pass@1 of several samples)."""
    if missing(value):
        return DASH
    value = float(value)
    return f"{value:.0f}" if value.is_integer() else f"{value:.1f}"


def ranking_display(table: pd.DataFrame, ranked: bool = True) -> pd.DataFrame:
    """The columns a reader compares, formatted; one row per entry of one board. Reference rows
    (baselines) carry no rank."""
    rows = []
    for row in table.to_dict("records"):
        reference = row.get("role") == "reference"
        rank = row.get("rank")
        correct = row.get("correct")
        rows.append({
            **({"rank": DASH if missing(rank) else str(int(rank))} if ranked else {}),
            "generator": f"{row['generator']} (reference)" if reference else row["generator"],
            "model": DASH if missing(row.get("model")) else row["model"],
            "fast_1": with_interval(percent(row.get("fast_1")), row.get("fast_1_ci"), percent),
            "geomean speedup": with_interval(times(row.get("geomean_speedup")), row.get("geomean_ci"), times),
            "correct / problems": DASH if missing(correct) else f"{amount(correct)}/{int(row['problems'])} "
                                                               f"({percent(row.get('correctness'))})",
            "attempted": f"{int(row['attempted'])}/{int(row['problems'])}",
            "compiled": percent(row.get("compile_rate")),
            "$ / correct kernel": dollars(row.get("cost_per_correct")),
            "tokens / problem": count(row.get("tokens_per_problem")),
            "median SOL": percent(row.get("median_sol_fraction")),
            "flagged": count(row.get("flagged_records")),
            "runs": count(row.get("runs")),
        })
    return pd.DataFrame(rows)


FLAG_MEANINGS = {
    "timer_mismatch": "the judge's wall clock disagrees with the worker's timer beyond what overhead explains",
    "below_sol": "faster than the speed-of-light floor of the device: the timing cannot be real",
    "input_mutated": "the candidate changed its inputs",
    "degenerate_problem": "the problem's output does not depend on its inputs (any constant passes)",
    "no_custom_kernel": "no kernel of its own: it calls PyTorch for the work",
    "timer_patched": "the candidate patched the timer or synchronisation functions",
}


def flag_meaning(flag: str) -> str:
    if flag.startswith("static:"):
        return f"the static checker's rule {flag[7:]!r} matched the source (docs/EXPLOITS_CORPUS.md)"
    return FLAG_MEANINGS.get(flag, "an integrity finding (docs/INTERFACES.md §5)")


TIME_UNITS = {"_ms": "ms", "_s": "s", "speedup": "x"}


def timing_text(name: str, value) -> str:
    """A timing with its unit and four significant digits; intervals as [lo, hi]."""
    unit = next((u for suffix, u in TIME_UNITS.items() if name.endswith(suffix) or suffix in name), "")
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return f"[{_num(value[0])}, {_num(value[1])}] {unit}".strip()
    return f"{_num(value)} {unit}".strip()


def _num(value) -> str:
    try:
        return f"{float(value):.4g}"
    except (TypeError, ValueError):
        return str(value)
