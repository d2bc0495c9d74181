"""Rankings and chart data computed from the light frame with ``harness.records.metrics``.

Everything here is a pure function of a DataFrame (as ``leaderboard.data.load_frame`` returns it)
so the app, the figures and the tests share one computation.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from harness.records import metrics
from leaderboard.data import records_of

BOARD_KEYS = ("suite", "level", "hardware", "precision")
ENTRY_KEYS = ("generator", "model")
METRIC_COLUMNS = (
    "problem_id", "correct", "status", "compiled", "flags", "speedup", "speedup_compile",
    "sol_fraction", "imported", *metrics.USAGE_FIELDS,
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
    if frame.empty:
        return {}
    keys = list(BOARD_KEYS + ENTRY_KEYS)
    columns = [name for name in dict.fromkeys(keys + list(METRIC_COLUMNS)) if name in frame.columns]
    records = records_of(frame[columns])
    positions = frame.groupby(keys, dropna=False, sort=False).indices  # positional, unlike .groups
    return {tuple(_clean(value) for value in key): [records[i] for i in index] for key, index in positions.items()}


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


def leaderboard(frame: pd.DataFrame, baseline: str = "eager", with_ci: bool = False,
                sizes: dict | None = None) -> pd.DataFrame:
    """The ranked table: Crucible's own records only (imported ones are never ranked). Flagged
    attempts stay in as failures, so hiding a flagged result cannot shrink the denominator.
    ``sizes`` (from ``level_sizes`` of the unfiltered frame) keeps denominators whole when the
    caller has filtered generators away."""
    own = frame[~frame["imported"]] if "imported" in frame else frame
    # Boards are per level; suites without levels (megakernel) have their own page.
    own = own[own["level"].notna()] if "level" in own else own
    return summary_rows(own, baseline, level_sizes(frame) if sizes is None else sizes, with_ci)


def imported_board(frame: pd.DataFrame, baseline: str = "eager", sizes: dict | None = None) -> pd.DataFrame:
    """Imported (published upstream) results, summarised the same way, shown beside, not ranked."""
    imported = frame[frame["imported"]] if "imported" in frame else frame.iloc[0:0]
    table = summary_rows(imported, baseline, level_sizes(frame) if sizes is None else sizes)
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


def fast_p_curves(frame: pd.DataFrame, baseline: str = "eager", ps=P_GRID, sizes: dict | None = None) -> pd.DataFrame:
    """Long table (suite, level, generator, model, p, fast_p) over a grid of thresholds."""
    sizes, rows = (level_sizes(frame) if sizes is None else sizes), []
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
    """Entries with both a dollar cost per problem and a geomean speedup, marked if on the Pareto
    front of their own board (suite, level, hardware, precision)."""
    columns = ["label", "level", "cost_per_problem", "geomean_speedup", "on_front"]
    needed = ["cost_per_problem", "geomean_speedup"]
    if board.empty or not set(needed) <= set(board.columns):
        return pd.DataFrame(columns=columns)
    points = board.dropna(subset=needed).copy()
    points["label"] = [f"{g} / {m}" if isinstance(m, str) and m else str(g)
                       for g, m in zip(points["generator"], points["model"])]
    for column in ("hardware", "precision"):  # one chart may mix machines: say which point is which
        if points[column].nunique(dropna=False) > 1:
            points["label"] = points["label"] + " @ " + points[column].astype(str)
    points["on_front"] = False
    for _, group in points.groupby(list(BOARD_KEYS), dropna=False):
        front = set(pareto_front(list(zip(group["cost_per_problem"], group["geomean_speedup"]))))
        marks = [(c, s) in front for c, s in zip(group["cost_per_problem"], group["geomean_speedup"])]
        points.loc[group.index, "on_front"] = marks
    return points[columns].reset_index(drop=True)


OK_VERDICTS = frozenset({"ok", "correct", "pass", "passed"})


def _step_ok(step: dict) -> bool:
    return step.get("correct") is True or str(step.get("verdict", "")).lower() in OK_VERDICTS


def transcript_steps(record: dict) -> list[dict]:
    """The numbered steps of a record's transcript (dicts with an integer ``step``), in order."""
    transcript = record.get("transcript")
    if not isinstance(transcript, list):
        return []
    steps = [s for s in transcript if isinstance(s, dict) and isinstance(s.get("step"), (int, float))]
    return sorted(steps, key=lambda s: s["step"])


def _best_so_far(steps: list[dict], last_step: int, trusted: bool) -> list[float | None]:
    """Per step 0..last_step, the best speedup of a correct step so far (0 marks correct, unmeasured)."""
    best, series, index = None, [], 0
    for step in range(last_step + 1):
        while index < len(steps) and steps[index]["step"] <= step:
            if trusted and _step_ok(steps[index]):
                speed = metrics.number(steps[index].get("speedup"))
                best = max(best or 0.0, speed or 0.0)
            index += 1
        series.append(best)
    return series


def refinement_steps(records: list[dict]) -> pd.DataFrame:
    """Per (generator, model, level) and refinement step: share of problems correct so far and the
    geomean best-so-far speedup of those. Flagged and imported records never count as correct."""
    with_steps = [r for r in records if transcript_steps(r) and not metrics.is_imported(r)]
    rows = []
    for (generator, model, level), group in metrics.group_records(with_steps, ["generator", "model", "level"]).items():
        last = int(max(transcript_steps(r)[-1]["step"] for r in group))
        series = [_best_so_far(transcript_steps(r), last, not metrics.flags_of(r)) for r in group]
        for step in range(last + 1):
            column = [values[step] for values in series]
            correct = [value for value in column if value is not None]
            rows.append({"generator": generator, "model": model, "level": level, "step": step,
                         "correctness": len(correct) / len(group),
                         "geomean_speedup": metrics.geomean(v for v in correct if v > 0)})
    return pd.DataFrame(rows, columns=["generator", "model", "level", "step", "correctness", "geomean_speedup"])


def tokens_correctness(records: list[dict]) -> pd.DataFrame:
    """Per (generator, model, level) and k = 1..attempts: tokens spent per problem on the first k
    attempts against the share of problems solved by one of them (best-of-k)."""
    own = [r for r in records if not metrics.is_imported(r)]
    rows = []
    for (generator, model, level), group in metrics.group_records(own, ["generator", "model", "level"]).items():
        by_problem = metrics.group_records(group, ["problem_id"])
        attempts = {key: sorted(rows_, key=lambda r: metrics.number(r.get("attempt")) or 0)
                    for key, rows_ in by_problem.items()}
        for k in range(1, max(len(a) for a in attempts.values()) + 1):
            first_k = [a[:k] for a in attempts.values()]
            tokens = metrics.sum_optional(metrics.attempt_tokens(r) for a in first_k for r in a)
            solved = sum(1 for a in first_k if any(metrics.attempt_correct(r) for r in a))
            rows.append({"generator": generator, "model": model, "level": level, "k": k,
                         "tokens_per_problem": None if tokens is None else tokens / len(first_k),
                         "correctness": solved / len(first_k)})
    return pd.DataFrame(rows, columns=["generator", "model", "level", "k", "tokens_per_problem", "correctness"])
