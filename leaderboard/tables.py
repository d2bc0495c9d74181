"""Rankings and chart data computed from the light frame with ``harness.metrics``.

Everything here is a pure function of a DataFrame (as ``leaderboard.data.load_frame`` returns it)
so the app, the figures and the tests share one computation.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from harness import metrics
from leaderboard.data import records_of

BOARD_KEYS = ("suite", "level", "hardware", "precision")
ENTRY_KEYS = ("generator", "model")
METRIC_COLUMNS = (
    "problem_id", "correct", "status", "compiled", "flags", "speedup", "speedup_compile",
    "sol_fraction", "usage", "imported",
)
P_GRID = tuple(round(p, 2) for p in np.arange(0.0, 3.01, 0.05))


def level_sizes(frame: pd.DataFrame) -> dict[tuple, int]:
    """Problems per (suite, level) over every loaded record: the fast_p denominator, so problems a
    generator skipped count against it."""
    if frame.empty:
        return {}
    sizes = frame.groupby(["suite", "level"], dropna=False)["problem_id"].nunique()
    return {(_clean(suite), _clean(level)): int(size) for (suite, level), size in sizes.items()}


def _clean(value):
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return int(value) if isinstance(value, (np.integer,)) else value


def entry_groups(frame: pd.DataFrame) -> dict[tuple, list[dict]]:
    """Records bucketed by board (suite, level, hardware, precision) and entry (generator, model)."""
    keys = list(BOARD_KEYS + ENTRY_KEYS)
    columns = [name for name in dict.fromkeys(keys + list(METRIC_COLUMNS)) if name in frame.columns]
    records = records_of(frame[columns])
    groups = metrics.group_records(records, keys)
    return {tuple(_clean(value) for value in key): rows for key, rows in groups.items()}


def summary_rows(frame: pd.DataFrame, baseline: str = "eager", sizes: dict | None = None,
                 with_ci: bool = False) -> pd.DataFrame:
    """One row per (board, entry) with the headline metrics, best entries first within a board."""
    sizes = level_sizes(frame) if sizes is None else sizes
    rows = []
    for key, records in entry_groups(frame).items():
        board = dict(zip(BOARD_KEYS + ENTRY_KEYS, key))
        total = sizes.get((board["suite"], board["level"]))
        rows.append({**board, **_row_metrics(records, baseline, total, with_ci)})
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table = table.sort_values(
        list(BOARD_KEYS) + ["fast_1", "geomean_speedup", "correctness"],
        ascending=[True] * len(BOARD_KEYS) + [False, False, False], na_position="last", kind="stable",
    )
    table.insert(0, "rank", table.groupby(list(BOARD_KEYS), dropna=False).cumcount() + 1)
    return table.reset_index(drop=True)


def _row_metrics(records: list[dict], baseline: str, total: int | None, with_ci: bool) -> dict:
    summary = metrics.level_summary(records, baseline=baseline, total_problems=total)
    row = {
        "problems": summary["problems"],
        "attempted": len({r["problem_id"] for r in records}),
        "correct": summary["correct"],
        "correctness": summary["correctness_rate"],
        "compile_rate": summary["compile_rate"],
        "fast_1": summary["fast_1"],
        "geomean_speedup": summary["geomean_speedup"],
        "median_sol_fraction": summary["median_sol_fraction"],
        "pass_at_1": summary["pass_at_k"].get(1),
        "tokens_per_problem": summary["tokens_per_problem"],
        "cost_per_problem": summary["cost_per_problem"],
        "cost_per_correct": summary["cost_per_correct"],
        "flagged_records": summary["flagged_records"],
        "records": summary["attempts"],
    }
    if with_ci:
        outcomes = metrics.problem_outcomes(records, baseline)
        outcomes += [metrics.ProblemOutcome(f"missing-{i}") for i in range(max(0, (total or 0) - len(outcomes)))]
        row["geomean_ci"] = metrics.geomean_ci(outcomes, n_resamples=1000)
        row["fast_1_ci"] = metrics.fast_p_ci(outcomes, 1.0, n_resamples=1000)
    return row


def leaderboard(frame: pd.DataFrame, baseline: str = "eager", with_ci: bool = False) -> pd.DataFrame:
    """The ranked table: Crucible's own records only (imported ones are never ranked). Flagged
    attempts stay in as failures, so hiding a flagged result cannot shrink the denominator."""
    own = frame[~frame["imported"]] if "imported" in frame else frame
    return summary_rows(own, baseline, level_sizes(frame), with_ci)


def imported_board(frame: pd.DataFrame, baseline: str = "eager") -> pd.DataFrame:
    """Imported (published upstream) results, summarised the same way, shown beside, not ranked."""
    imported = frame[frame["imported"]] if "imported" in frame else frame.iloc[0:0]
    table = summary_rows(imported, baseline, level_sizes(frame))
    return table.drop(columns=["rank"]) if "rank" in table else table


def flagged_records(frame: pd.DataFrame) -> pd.DataFrame:
    """Every flagged record with its flags, for display (never ranked)."""
    flagged = frame[frame["flagged"]] if "flagged" in frame else frame.iloc[0:0]
    columns = ["suite", "level", "hardware", "generator", "model", "problem_id", "attempt", "status",
               "correct", "speedup", "flags", "run_file", "line_index"]
    table = flagged[[name for name in columns if name in flagged]].copy()
    table["flags"] = [", ".join(flags) for flags in table["flags"]]
    return table.reset_index(drop=True)


def problem_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Attempts for drill-down: one row per record with verdict, timings and cost."""
    columns = ["problem_id", "generator", "model", "attempt", "status", "correct", "flags", "reason",
               "candidate_ms", "eager_ms", "compile_ms", "speedup", "speedup_compile", "sol_fraction",
               "tokens", "cost_usd", "hardware", "precision", "run_file", "line_index"]
    table = frame[[name for name in columns if name in frame]].copy()
    table["flags"] = [", ".join(flags) for flags in table["flags"]]
    return table.sort_values(["problem_id", "generator", "attempt"], kind="stable").reset_index(drop=True)


def fast_p_curves(frame: pd.DataFrame, baseline: str = "eager", ps=P_GRID) -> pd.DataFrame:
    """Long table (suite, level, generator, model, p, fast_p) over a grid of thresholds."""
    sizes, rows = level_sizes(frame), []
    own = frame[~frame["imported"]] if "imported" in frame else frame
    for key, records in entry_groups(own).items():
        board = dict(zip(BOARD_KEYS + ENTRY_KEYS, key))
        outcomes = metrics.problem_outcomes(records, baseline)
        curve = metrics.fast_p_curve(outcomes, ps, sizes.get((board["suite"], board["level"])))
        rows += [{**board, "p": p, "fast_p": value} for p, value in curve.items()]
    return pd.DataFrame(rows)


def best_speedups(frame: pd.DataFrame, baseline: str = "best") -> pd.DataFrame:
    """Per problem and entry, the best correct speedup (against the faster baseline by default)."""
    rows = []
    for key, records in entry_groups(frame[~frame["imported"]] if "imported" in frame else frame).items():
        board = dict(zip(BOARD_KEYS + ENTRY_KEYS, key))
        for outcome in metrics.problem_outcomes(records, baseline):
            if outcome.correct and outcome.speedup is not None:
                rows.append({**board, "problem_id": outcome.problem_id, "speedup": outcome.speedup})
    return pd.DataFrame(rows, columns=list(BOARD_KEYS + ENTRY_KEYS) + ["problem_id", "speedup"])


def pareto_front(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points not dominated when cost is minimised and speedup maximised, by increasing cost."""
    front: list[tuple[float, float]] = []
    for cost, speedup in sorted(points, key=lambda point: (point[0], -point[1])):
        if not front or speedup > front[-1][1]:
            front.append((cost, speedup))
    return front


def cost_speedup_points(board: pd.DataFrame) -> pd.DataFrame:
    """Entries with both a dollar cost per problem and a geomean speedup, marked if on the front."""
    needed = {"cost_per_problem", "geomean_speedup"}
    if board.empty or not needed <= set(board.columns):
        return pd.DataFrame(columns=["label", "cost_per_problem", "geomean_speedup", "on_front"])
    points = board.dropna(subset=list(needed)).copy()
    points["label"] = [f"{g} / {m}" if m else str(g) for g, m in zip(points["generator"], points["model"])]
    front = set(pareto_front(list(zip(points["cost_per_problem"], points["geomean_speedup"]))))
    points["on_front"] = [(c, s) in front for c, s in zip(points["cost_per_problem"], points["geomean_speedup"])]
    return points[["label", "level", "cost_per_problem", "geomean_speedup", "on_front"]].reset_index(drop=True)
