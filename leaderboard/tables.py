"""Rankings and chart data computed from the light frame with ``harness.records.metrics``.

Everything here is a pure function of a DataFrame (as ``leaderboard.data.load_frame`` returns it)
so the app, the figures and the tests share one computation.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from harness.records import boards

from harness.records import metrics

BOARD_KEYS = metrics.BOARD_KEYS
ENTRY_KEYS = metrics.ENTRY_KEYS
P_GRID = tuple(round(p, 2) for p in np.arange(0.0, 3.01, 0.05))


def level_sizes(frame: pd.DataFrame) -> dict[tuple, int]:
    """Scored problems per (suite, level) over every loaded record (``harness.records.metrics``)."""
    return metrics.level_sizes(frame)


def leaderboard(frame: pd.DataFrame, baseline: str = "eager", with_ci: bool = False, sizes: dict | None = None,
                runs: str = "latest", attempts: str = "mean") -> pd.DataFrame:
    """Every board with its ranked entries (rank 1..n) and reference rows (baselines, no rank);
    imported results are left to ``imported_board``. Flagged attempts stay in as failures."""
    sizes = level_sizes(frame) if sizes is None else sizes
    own = frame[~frame["imported"]] if "imported" in frame else frame
    return boards.boards(own, baseline, runs, attempts, sizes=sizes, intervals=with_ci)


def imported_board(frame: pd.DataFrame, baseline: str = "eager", sizes: dict | None = None) -> pd.DataFrame:
    """Imported (published upstream) results, summarised the same way, shown beside, not ranked.
    Upstream files carry no timing intervals, so their wins are point estimates (and say so)."""
    imported = frame[frame["imported"]] if "imported" in frame else frame.iloc[0:0]
    sizes = level_sizes(frame) if sizes is None else sizes
    table = boards.boards(imported, baseline, wins="point", sizes=sizes, reference_rows=False)
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
               "candidate_ms", "eager_ms", "compile_ms", "speedup", "speedup_compile", "speed_verdict",
               "sol_fraction", "tokens", "cost_usd", "hardware", "precision", "size", "timer", "run_id",
               "run_created", "excluded", "run_file", "line_index"]
    table = frame[[name for name in columns if name in frame]].copy()
    table["flags"] = [", ".join(flags) if flags is not None else "" for flags in table["flags"]]
    return table.sort_values(["problem_id", "generator", "attempt"], kind="stable").reset_index(drop=True)


def problem_grid(frame: pd.DataFrame, baseline: str = "eager", runs: str = "latest", attempts: str = "mean",
                 wins: str = "interval") -> pd.DataFrame:
    """Per board, entry and problem: share correct, speedup (geomean over correct attempts), whether
    it is an established win, and the verdict; the data of the generator x problem heatmap."""
    keys = metrics.entry_keys(runs)
    shown = metrics.select_runs(metrics.attempt_frame(frame, baseline, wins), runs)
    if shown.empty:
        return pd.DataFrame(columns=keys + ["problem_id", "correct", "speedup", "verdict", "entry"])
    grid = metrics.problem_table(shown, keys, attempts, (0.0, 1.0))
    grid["speedup"] = np.exp(grid["log_speedup"])
    grid["verdict"] = np.select(
        [grid["n"] == 0, grid["correct"] <= 0, grid["win_1"] >= 0.5, grid["speedup"].isna()],
        ["not the model's failure", "failed", "faster (interval above 1)", "correct, untimed"], "correct, not faster")
    grid["entry"] = [_label(g, m) for g, m in zip(grid["generator"], grid["model"])]
    return grid


def _label(generator, model) -> str:
    missing = model is None or (isinstance(model, float) and math.isnan(model)) or model == ""
    return str(generator) if missing else f"{generator} / {model}"


def fast_p_curves(frame: pd.DataFrame, baseline: str = "eager", ps=P_GRID, sizes: dict | None = None,
                  runs: str = "latest") -> pd.DataFrame:
    """Long table (board, entry, p, fast_p) over a grid of thresholds, by the same rules as the board."""
    sizes = level_sizes(frame) if sizes is None else sizes
    own = frame[~frame["imported"]] if "imported" in frame else frame
    keys = metrics.entry_keys(runs)
    shown = metrics.select_runs(metrics.attempt_frame(own, baseline), runs)
    if shown.empty:
        return pd.DataFrame(columns=keys + ["p", "fast_p"])
    table = metrics.entry_table(metrics.problem_table(shown, keys, "mean", ps), keys, sizes, ps)
    columns = {f"fast_{float(p):g}": float(p) for p in ps}
    long = table.melt(id_vars=keys, value_vars=list(columns), var_name="p", value_name="fast_p")
    long["p"] = long["p"].map(columns)
    return long


def best_speedups(frame: pd.DataFrame, baseline: str = "best", runs: str = "latest") -> pd.DataFrame:
    """Per problem and entry, the speedup of its correct attempts (geomean), against ``baseline``."""
    own = frame[~frame["imported"]] if "imported" in frame else frame
    grid = problem_grid(own, baseline, runs)
    columns = list(BOARD_KEYS + ENTRY_KEYS) + ["problem_id", "speedup"]
    return grid.dropna(subset=["speedup"])[columns].reset_index(drop=True) if len(grid) else pd.DataFrame(columns=columns)


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
    with_steps = [{**r, "_steps": steps} for r in records
                  if not metrics.is_imported(r) and (steps := transcript_steps(r))]  # ordered once per record
    rows = []
    for (generator, model, level), group in metrics.group_records(with_steps, ["generator", "model", "level"]).items():
        last = int(max(r["_steps"][-1]["step"] for r in group))
        series = [_best_so_far(r["_steps"], last, not metrics.flags_of(r)) for r in group]
        for step in range(last + 1):
            column = [values[step] for values in series]
            correct = [value for value in column if value is not None]
            rows.append({"generator": generator, "model": model, "level": level, "step": step,
                         "correctness": len(correct) / len(group),
                         "geomean_speedup": metrics.geomean(v for v in correct if v > 0)})
    return pd.DataFrame(rows, columns=["generator", "model", "level", "step", "correctness", "geomean_speedup"])


def tokens_correctness(records) -> pd.DataFrame:
    """Per (generator, model, level) and k = 1..attempts: tokens spent per problem on the first k
    attempts against the share of problems solved by one of them (best-of-k, as the figure says).
    ``records``: dicts or a frame of them; vectorised, so 100,000 records take well under a second."""
    columns = ["generator", "model", "level", "k", "tokens_per_problem", "correctness"]
    frame = records if isinstance(records, pd.DataFrame) else pd.DataFrame(list(records))
    if frame.empty:
        return pd.DataFrame(columns=columns)
    shown = metrics.attempt_frame(frame)
    shown = shown[~shown["imported"]].assign(attempt=pd.to_numeric(shown["attempt"], errors="coerce").fillna(0))
    shown = shown.sort_values("attempt", kind="stable")
    problem = metrics.group_codes(shown, ["generator", "model", "level", "problem_id"])
    entry = metrics.group_codes(shown, ["generator", "model", "level"])
    grouped = shown.assign(problem=problem).groupby("problem", sort=False)
    known = shown["tokens"].notna().astype(int).groupby(problem).cummax()
    shown = shown.assign(problem=problem, entry=entry, k=grouped.cumcount() + 1, spent=grouped["tokens"].cumsum(),
                         known=known, solved=grouped["ok"].cummax())
    rows = []
    most = shown.groupby("entry")["k"].max()  # an entry's curve stops at its own number of attempts
    for k in range(1, int(shown["k"].max()) + 1):
        last = shown[(shown["k"] <= k) & (shown["entry"].map(most) >= k)].groupby("problem", sort=False).last()
        for _, part in last.groupby("entry", sort=False):
            first = part.iloc[0]
            tokens = part["spent"].where(part["known"].astype(bool))
            rows.append({"generator": first["generator"], "model": first["model"], "level": first["level"], "k": k,
                         "tokens_per_problem": tokens.sum() / len(part) if tokens.notna().any() else None,
                         "correctness": float(part["solved"].mean())})
    return pd.DataFrame(rows, columns=columns)
