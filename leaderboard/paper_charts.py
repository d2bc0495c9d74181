"""The paper figures added beside ``charts.py``: per-level fast_1 bars with intervals, the
generator x problem heatmap, the failure-mode breakdown, the SOL-fraction distribution, tokens
against speedup and the megakernel validator's throughput. Each takes prepared data and returns a
Figure, or raises ``charts.NoData`` saying what is missing (a degenerate figure is not drawn)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from leaderboard.charts import NoData, _finish, _labelled, _log_speedup_axis, _panels, colours

FAILURE_ORDER = ("ok", "incorrect", "runtime_error", "compile_error", "timeout", "rejected", "flagged")
FAILURE_COLOURS = {"ok": "seagreen", "incorrect": "darkorange", "runtime_error": "firebrick",
                   "compile_error": "slateblue", "timeout": "grey", "rejected": "black", "flagged": "purple",
                   "other": "lightgrey"}


def fast_1_bars(table: pd.DataFrame, title: str):
    """Per level, each entry's fast_1 with its bootstrap interval (``harness.records.boards`` rows)."""
    rows = table.dropna(subset=["fast_1"]) if not table.empty else table
    if rows.empty or not (rows["role"] == "ranked").any():
        raise NoData("no ranked entry with a measured fast_1 (only baselines, or nothing timed)")
    if not (rows["fast_1"] > 0).any():
        raise NoData("no entry has an established win (fast_1 is 0 or unmeasured everywhere)")
    rows = _labelled(rows)
    reference = rows["role"] == "reference"
    rows.loc[reference, "label"] = rows.loc[reference, "label"] + " (reference)"
    levels = sorted(rows["level"].dropna().unique().tolist())
    palette = colours(rows["label"])
    figure, axes = _panels(len(levels), width=4.6, height=3.6)
    for axis, level in zip(axes, levels):
        part = rows[rows["level"] == level].sort_values("fast_1", ascending=False)
        low = [max(0.0, v - ci[0]) if isinstance(ci, tuple) else 0.0 for v, ci in zip(part["fast_1"], part.get("fast_1_ci", [None] * len(part)))]
        high = [max(0.0, ci[1] - v) if isinstance(ci, tuple) else 0.0 for v, ci in zip(part["fast_1"], part.get("fast_1_ci", [None] * len(part)))]
        bars = axis.bar(range(len(part)), part["fast_1"], yerr=[low, high], capsize=3,
                        color=[palette[label] for label in part["label"]])
        for bar, role in zip(bars, part["role"]):  # baselines are drawn for scale, hatched: not ranked
            if role == "reference":
                bar.set_hatch("//")
                bar.set_alpha(0.6)
        axis.set_xticks(range(len(part)), part["label"], rotation=30, ha="right", fontsize=7)
        axis.set(title=f"Level {level}", ylabel="fast_1 (95% bootstrap interval)", ylim=(0, 1.02))
    return _finish(figure, title)


def problem_heatmap(grid: pd.DataFrame, title: str):
    """Entry x problem, colour = speedup of the correct attempts (log, 1x white), grey = not correct."""
    if grid.empty or grid["speedup"].notna().sum() == 0:
        raise NoData("no correct kernel with a measured speedup to colour the grid")
    levels = sorted(grid["level"].dropna().unique().tolist())
    figure, axes = _panels(len(levels), width=6.0, height=0.4 * grid["entry"].nunique() + 1.8)
    image = None
    for axis, level in zip(axes, levels):
        part = grid[grid["level"] == level]
        matrix = part.pivot_table(index="entry", columns="problem_id", values="speedup", aggfunc="first")
        values = np.log2(matrix.to_numpy(dtype=float))
        image = axis.imshow(np.ma.masked_invalid(values), aspect="auto", cmap="RdYlGn", vmin=-2, vmax=2,
                            interpolation="nearest")
        axis.set_facecolor("lightgrey")
        axis.set_yticks(range(len(matrix.index)), matrix.index, fontsize=7)
        axis.set_xticks([])
        axis.set(title=f"Level {level} ({matrix.shape[1]} problems)", xlabel="problem")
        axis.grid(False)
    bar = figure.colorbar(image, ax=axes, shrink=0.8)
    bar.set_ticks([-2, -1, 0, 1, 2], labels=["0.25x", "0.5x", "1x", "2x", "4x"])
    figure.suptitle(title)
    return figure


def failure_breakdown(counts: pd.DataFrame, title: str):
    """Stacked shares of each entry's attempts by outcome (ok, incorrect, errors, flagged)."""
    if counts.empty:
        raise NoData("no attempts to break down")
    counts = _labelled(counts)
    table = counts.pivot_table(index="label", columns="outcome", values="attempts", aggfunc="sum", fill_value=0)
    shares = table.div(table.sum(axis=1), axis=0)
    order = [c for c in FAILURE_ORDER if c in shares.columns] + [c for c in shares.columns if c not in FAILURE_ORDER]
    figure, (axis,) = _panels(1, width=7.0, height=0.35 * len(shares) + 1.6)
    left = np.zeros(len(shares))
    for outcome in order:
        axis.barh(shares.index, shares[outcome], left=left, label=outcome,
                  color=FAILURE_COLOURS.get(outcome, FAILURE_COLOURS["other"]))
        left += shares[outcome].to_numpy()
    axis.set(xlabel="share of attempts", xlim=(0, 1))
    axis.legend(fontsize=7, ncol=4, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    return _finish(figure, title)


def sol_distribution(values: pd.DataFrame, title: str):
    """Per entry, the spread of SOL fractions of correct problems (share of the speed of light)."""
    values = values.dropna(subset=["sol_fraction"]) if not values.empty else values
    if values.empty:
        raise NoData("no correct kernel with a SOL fraction")
    values = _labelled(values)
    labels = sorted(values["label"].unique())
    figure, (axis,) = _panels(1, width=max(5.0, 0.8 * len(labels) + 2), height=3.8)
    data = [values.loc[values["label"] == label, "sol_fraction"].to_numpy() for label in labels]
    axis.boxplot(data, showfliers=False, widths=0.5)
    for position, part in enumerate(data, 1):
        axis.scatter(np.full(len(part), position) + np.linspace(-0.15, 0.15, len(part)), part, s=6, alpha=0.5, rasterized=True)
    axis.set_xticks(range(1, len(labels) + 1), labels, rotation=30, ha="right", fontsize=7)
    axis.set(ylabel="SOL fraction (floor time / measured time)")
    return _finish(figure, title)


def tokens_speedup(points: pd.DataFrame, title: str):
    """Tokens spent on each correct attempt against its speedup (log-log), per entry."""
    points = points.dropna(subset=["tokens", "speedup"]) if not points.empty else points
    points = points[(points["tokens"] > 0) & (points["speedup"] > 0)] if not points.empty else points
    if points.empty:
        raise NoData("no correct, timed attempt carries token usage")
    points = _labelled(points)
    palette = colours(points["label"])
    figure, (axis,) = _panels(1, width=6.0, height=4.0)
    for label, part in points.groupby("label", sort=True):
        axis.scatter(part["tokens"], part["speedup"], s=10, alpha=0.6, label=label, color=palette[label], rasterized=True)
    axis.set_xscale("log")
    _log_speedup_axis(axis, points["speedup"].tolist())
    axis.axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
    axis.set(xlabel="tokens for the attempt (input + output, log)", ylabel="speedup (log)")
    axis.legend(fontsize=7)
    return _finish(figure, title)


def validator_throughput(summary: dict | None):
    """Schedules validated per second for each corpus slice of the megakernel summary."""
    throughput = (summary or {}).get("throughput")
    rates = {k[: -len("_per_s")]: v for k, v in (throughput or {}).items()
             if k.endswith("_per_s") and isinstance(v, (int, float)) and v > 0}
    if not rates:
        raise NoData("the megakernel summary has no throughput (<slice>_per_s)")
    figure, (axis,) = _panels(1, width=5.0, height=3.2)
    names = list(rates)
    axis.bar(names, [rates[n] for n in names], color="steelblue")
    for index, name in enumerate(names):
        tasks = throughput.get(f"{name}_mean_tasks")
        note = f"{rates[name]:,.0f}/s" + (f"\n{tasks:.0f} tasks avg" if isinstance(tasks, (int, float)) else "")
        axis.annotate(note, (index, rates[name]), ha="center", fontsize=7, xytext=(0, 3), textcoords="offset points")
    axis.set(ylabel="schedules validated per second", xlabel="corpus slice")
    axis.margins(y=0.2)
    return _finish(figure, "Megakernel validator throughput")
