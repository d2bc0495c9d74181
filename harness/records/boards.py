"""Leaderboards from a DataFrame of records, by the rules of ``harness.records.metrics``: one row per entry
of each board, ranked entries first in rank order, reference rows (baselines) and imported
results beside them with no rank. Shared by the app, the figures and ``load_runs`` users:

    from harness.records.results import load_runs
    from harness.records.boards import boards
    table = boards(load_runs("results/runs"), baseline="compile")
"""

from __future__ import annotations

import math
from typing import Iterable

from harness.records import metrics

RANK_BY_SPEED = ("fast_1", "geomean_speedup", "correctness")
RANK_BY_CORRECTNESS = ("correctness", "fast_1", "geomean_speedup")


def boards(frame, baseline: str = "eager", runs: str = "latest", attempts: str = "mean", wins: str = "interval",
           sizes: dict | None = None, ps: Iterable[float] = metrics.FAST_P, intervals: bool = False,
           reference_rows: bool = True):
    """Every board's entries with their metrics, ``role`` (ranked, reference, imported) and ``rank``.

    ``sizes`` (``metrics.level_sizes`` of the unfiltered frame) keeps denominators whole when the
    caller filtered generators away. Boards are per level: records without one are left out."""
    import pandas as pd

    ps = tuple(ps)
    frame = frame[frame["level"].notna()] if "level" in frame.columns else frame.iloc[0:0]
    sizes = metrics.level_sizes(frame) if sizes is None else sizes
    keys = metrics.entry_keys(runs)
    shown = metrics.select_runs(metrics.attempt_frame(frame, baseline, wins), runs)
    if shown.empty:
        return pd.DataFrame(columns=keys + ["role", "rank"])
    problems = metrics.problem_table(shown, keys, attempts, ps)
    table = metrics.entry_table(problems, keys, sizes, ps)
    table = _run_facts(shown, keys, table)
    table["role"] = ["imported" if imp else "reference" if gen in metrics.REFERENCE_GENERATORS else "ranked"
                     for imp, gen in zip(table["imported"], table["generator"])]
    if intervals:
        table = _with_intervals(table, problems, keys)
    if reference_rows:
        table = pd.concat([table, baseline_rows(shown, baseline, sizes)], ignore_index=True)
    return rank(table)


def _run_facts(shown, keys, table):
    """Per entry: how many runs contributed and the latest one's date and commit."""
    codes = metrics.group_codes(shown, keys)
    grouped = shown.assign(entry_code=codes).groupby("entry_code", sort=False)
    facts = grouped.agg(runs=("run_id", "nunique"), run_created=("run_created", "max"),
                        run_commit=("run_commit", "last"))
    # table's entry_code came from the problem table, coded from the same rows in the same order
    first_rows = shown.assign(entry_code=codes).drop_duplicates("entry_code")
    by_key = {tuple(map(_k, (getattr(r, k) for k in keys))): r.entry_code for r in first_rows.itertuples()}
    table = table.assign(entry_code=[by_key.get(tuple(_k(v) for v in row)) for row in zip(*(table[k] for k in keys))])
    return table.join(facts, on="entry_code")


def rank(table):
    """Rank the ranked entries of each board. Where any of them has no measured speed (CPU runs
    time nothing), speed cannot order them: they are ranked by correctness and say so."""
    import pandas as pd

    if table.empty:
        return table.assign(rank=pd.Series(dtype="Int64"), rank_basis=pd.Series(dtype=object))
    parts = []
    board_keys = list(metrics.BOARD_KEYS)
    for _, board in table.groupby([metrics._key(table[k]) for k in board_keys], sort=True):
        ranked = board[board["role"] == "ranked"]
        by_speed = not ranked.empty and ranked["fast_1"].notna().all()
        order = list(RANK_BY_SPEED if by_speed else RANK_BY_CORRECTNESS)
        ranked = ranked.sort_values(order, ascending=False, na_position="last", kind="stable")
        ranked = ranked.assign(rank=range(1, len(ranked) + 1), rank_basis="fast_1" if by_speed else "correctness")
        others = board[board["role"] != "ranked"].sort_values(["role", "generator"], kind="stable")
        parts += [ranked, others.assign(rank=pd.NA, rank_basis=None)]
    result = pd.concat(parts, ignore_index=True)
    result["rank"] = result["rank"].astype("Int64")
    return result


def _with_intervals(table, problems, keys, resamples: int = 1000):
    """95% percentile bootstrap over the level's problems (missing ones count as failures) for
    fast_1 and the geomean speedup; seeded, so the same records give the same interval."""
    import numpy as np

    groups = problems.groupby(metrics.group_codes(problems, keys), sort=False).indices
    lookup = {tuple(_k(problems[k].iat[rows[0]]) for k in keys): rows for rows in groups.values()}
    fast, geo = [], []
    for row in table.itertuples(index=False):
        index = lookup.get(tuple(_k(getattr(row, k)) for k in keys), [])
        rows = problems.iloc[index]
        hits = np.zeros(max(int(row.problems), len(rows)))
        hits[: len(rows)] = rows["win_1"].to_numpy() if "win_1" in rows else 0.0
        logs = rows["log_speedup"].dropna().to_numpy()
        fast.append(_bootstrap_mean(hits, resamples))
        low_high = _bootstrap_mean(logs, resamples)
        geo.append(None if low_high is None else (math.exp(low_high[0]), math.exp(low_high[1])))
    return table.assign(fast_1_ci=fast, geomean_ci=geo)


def _k(value) -> str:
    if value is None or value is metrics.MISSING or (isinstance(value, float) and math.isnan(value)):
        return metrics.MISSING
    return metrics.MISSING if str(value) == "<NA>" else str(value)


def _bootstrap_mean(values, resamples: int, seed: int = 0) -> tuple[float, float] | None:
    import numpy as np

    if len(values) < 2:
        return None
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(resamples, len(values)))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


BASELINE_NAMES = {"eager": "PyTorch eager", "compile": "torch.compile"}


def baseline_rows(shown, baseline: str, sizes: dict):
    """Reference rows for the eager and torch.compile baselines of each board, from the times the
    runs measured for them: per problem the median ratio, a win only where the timing intervals
    separate (eager's low over compile's high, or the reverse)."""
    import numpy as np
    import pandas as pd

    timed = shown[shown["eager_ms"].gt(0) & shown["compile_ms"].gt(0) & ~shown["imported"] & ~shown["excluded"]]
    if timed.empty:
        return pd.DataFrame()
    ratio = timed["eager_ms"] / timed["compile_ms"]  # compile's speedup over eager
    versus = {  # versus[baseline][row]: (point, low) of the row's speedup, baseline time over its time
        "eager": {"eager": (1.0, 1.0), "compile": (ratio, timed["eager_ms_lo"] / timed["compile_ms_hi"])},
        "compile": {"eager": (1 / ratio, timed["compile_ms_lo"] / timed["eager_ms_hi"]), "compile": (1.0, 1.0)},
    }
    rows = []
    board_keys = list(metrics.BOARD_KEYS)
    for name in ("eager", "compile"):
        if baseline == "best":
            point = np.fmin(_series(versus["eager"][name][0], timed), _series(versus["compile"][name][0], timed))
            low = np.fmin(_series(versus["eager"][name][1], timed), _series(versus["compile"][name][1], timed))
        else:
            point, low = (_series(v, timed) for v in versus[baseline][name])
        per = timed[board_keys + ["problem_id"]].assign(point=np.log(point), win=(low > 1.0).astype(float))
        grouped = per.groupby(metrics.group_codes(per, board_keys + ["problem_id"]), sort=False)
        problems = grouped[board_keys].first().assign(point=grouped["point"].median(), win=grouped["win"].median())
        by_board = problems.groupby(metrics.group_codes(problems, board_keys), sort=False)
        for _, board in by_board:
            first = board.iloc[0]
            size = sizes.get(metrics._size_key(first["suite"], first["level"]), len(board))
            rows.append({**{k: first[k] for k in board_keys}, "generator": BASELINE_NAMES[name], "model": None,
                         "settings": None, "role": "reference", "attempted": len(board), "problems": size,
                         "timed": len(board), "geomean_speedup": math.exp(board["point"].mean()),
                         "fast_1": (board["win"] > 0.5).sum() / max(size, 1)})
    return pd.DataFrame(rows)


def _series(value, like):
    import pandas as pd

    return value if isinstance(value, pd.Series) else pd.Series(value, index=like.index, dtype=float)
