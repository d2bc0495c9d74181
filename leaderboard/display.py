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


def board_title(suite, level, hardware, precision) -> str:
    level_text = DASH if missing(level) else f"Level {level}"
    return " · ".join(str(part) for part in (suite, level_text, hardware, precision) if not missing(part))


def ranking_display(table: pd.DataFrame, ranked: bool = True) -> pd.DataFrame:
    """The columns a reader compares, formatted; one row per entry of one board."""
    rows = []
    for row in table.to_dict("records"):
        rows.append({
            **({"rank": int(row["rank"])} if ranked and "rank" in row else {}),
            "generator": row["generator"],
            "model": DASH if missing(row.get("model")) else row["model"],
            "fast_1": with_interval(percent(row["fast_1"]), row.get("fast_1_ci"), percent),
            "geomean speedup": with_interval(times(row["geomean_speedup"]), row.get("geomean_ci"), times),
            "correct": f"{row['correct']}/{row['problems']} ({percent(row['correctness'])})",
            "compiled": percent(row["compile_rate"]),
            "$ / correct kernel": dollars(row["cost_per_correct"]),
            "tokens / problem": count(row["tokens_per_problem"]),
            "median SOL": percent(row["median_sol_fraction"]),
            "flagged": int(row["flagged_records"]),
        })
    return pd.DataFrame(rows)
