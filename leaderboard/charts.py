"""Matplotlib charts shared by the app (``st.pyplot``) and the figure command (PNG and PDF).

Each function takes prepared data (``leaderboard.tables``) and returns a Figure, or raises
``NoData`` with a sentence saying what is missing, so callers can skip a chart and say why.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # no display, and the same pixels everywhere

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import FuncFormatter, MaxNLocator  # noqa: E402

from leaderboard.tables import pareto_front  # noqa: E402

STYLE = {
    "figure.dpi": 100, "savefig.dpi": 150, "font.size": 9, "axes.grid": True, "grid.alpha": 0.3,
    "axes.spines.top": False, "axes.spines.right": False, "svg.hashsalt": "crucible",
    "pdf.compression": 6, "path.simplify": False,
}
PALETTE = plt.get_cmap("tab20").colors  # 20 distinct colours: a figure rarely has more series


def png_bytes(figure) -> bytes:
    """The figure as PNG bytes (for the app), closed afterwards."""
    import io

    buffer = io.BytesIO()
    with plt.rc_context(STYLE):
        figure.savefig(buffer, format="png", metadata={"Software": None})
    plt.close(figure)
    return buffer.getvalue()


class NoData(Exception):
    """A chart cannot be drawn from the data given; the message says what is missing."""


def entry_label(generator, model) -> str:
    missing = model is None or (isinstance(model, float) and np.isnan(model)) or model == ""
    return str(generator) if missing else f"{generator} / {model}"


def colours(labels) -> dict[str, tuple]:
    """The same colour for the same entry in every panel of a figure."""
    return {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(sorted(set(labels)))}


def _panels(count: int, width: float = 4.2, height: float = 3.4):
    with plt.rc_context(STYLE):
        figure, axes = plt.subplots(1, count, figsize=(width * count, height), squeeze=False)
    return figure, list(axes[0])


def _levels(frame: pd.DataFrame) -> list:
    return sorted(frame["level"].dropna().unique().tolist()) if "level" in frame else []


def _labelled(frame: pd.DataFrame) -> pd.DataFrame:
    """Entry labels; hardware and precision join them when the frame mixes several, so series of
    different machines are never merged."""
    frame = frame.copy()
    frame["label"] = [entry_label(g, m) for g, m in zip(frame["generator"], frame["model"])]
    for column in ("hardware", "precision"):
        if column in frame and frame[column].nunique(dropna=False) > 1:
            frame["label"] = frame["label"] + " @ " + frame[column].astype(str)
    return frame


def _finish(figure, title: str):
    figure.suptitle(title)
    figure.tight_layout()
    return figure


def fast_p_chart(curves: pd.DataFrame, title: str = "fast_p against speedup threshold p"):
    """One panel per level, one line per generator/model (``tables.fast_p_curves``)."""
    curves = curves.dropna(subset=["fast_p"]) if not curves.empty else curves
    if curves.empty or not (curves["p"] > 0).any():
        raise NoData("no measured speedups: fast_p for p > 0 needs timed, correct kernels")
    curves = _labelled(curves)
    palette, levels = colours(curves["label"]), _levels(curves)
    figure, axes = _panels(len(levels))
    for axis, level in zip(axes, levels):
        for label, line in curves[curves["level"] == level].groupby("label", sort=True):
            line = line.groupby("p", as_index=False)["fast_p"].mean()
            axis.plot(line["p"], line["fast_p"], label=label, color=palette[label], linewidth=1.6)
        axis.axvline(1.0, color="grey", linewidth=0.8, linestyle=":")
        axis.set(title=f"Level {level}", xlabel="speedup threshold p", ylabel="fast_p", ylim=(0, 1.02))
    axes[0].legend(fontsize=7, loc="upper right")
    return _finish(figure, title)


def speedup_distribution_chart(speedups: pd.DataFrame, baseline_name: str = "the faster of eager and torch.compile",
                               title: str | None = None):
    """Per level, the spread of best correct speedups per entry (log scale), 1x marked."""
    if speedups.empty:
        raise NoData("no correct kernel with a measured speedup")
    speedups = _labelled(speedups)
    levels = _levels(speedups)
    figure, axes = _panels(len(levels), width=5.0)
    for axis, level in zip(axes, levels):
        subset = speedups[speedups["level"] == level]
        labels = sorted(subset["label"].unique())
        data = [subset.loc[subset["label"] == label, "speedup"].to_numpy() for label in labels]
        axis.boxplot(data, showfliers=False, widths=0.5)
        for position, values in enumerate(data, 1):
            jitter = np.linspace(-0.15, 0.15, len(values)) if len(values) > 1 else [0.0]
            axis.scatter(position + np.asarray(jitter), values, s=8, alpha=0.6, color=PALETTE[0], rasterized=True)
        _log_speedup_axis(axis, [float(v) for values in data for v in values])
        axis.axhline(1.0, color="firebrick", linewidth=0.9, linestyle="--")
        axis.set_xticks(range(1, len(labels) + 1), labels, rotation=30, ha="right", fontsize=7)
        axis.set(title=f"Level {level}", ylabel="speedup (log)")
    return _finish(figure, title or f"Speedup of correct kernels against {baseline_name}")


NICE_SPEEDUPS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 0.75, 1, 1.1, 1.25, 1.5, 2, 3, 4, 5, 10, 20, 50, 100, 200, 500)


def _log_speedup_axis(axis, values) -> None:
    """Log scale labelled in plain speedups (0.5x, 1x, 2x) chosen to fit the data's range."""
    from matplotlib.ticker import FixedLocator, NullLocator

    values = [v for v in values if v > 0]
    low, high = min(values + [1.0]) / 1.05, max(values + [1.0]) * 1.05
    ticks = [t for t in NICE_SPEEDUPS if low <= t <= high]
    ticks = ticks[:: max(1, len(ticks) // 8 + (len(ticks) % 8 > 0))] if len(ticks) > 8 else ticks
    axis.set_yscale("log")
    axis.set_ylim(low, high)
    axis.yaxis.set_major_locator(FixedLocator(ticks))
    axis.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}x"))
    axis.yaxis.set_minor_locator(NullLocator())


def refinement_chart(steps: pd.DataFrame, title: str = "Correctness and speedup against refinement step"):
    """Correctness and geomean best-so-far speedup against refinement step (``tables.refinement_steps``)."""
    if steps.empty:
        raise NoData("no record carries a refinement transcript with numbered steps")
    steps = _labelled(steps)
    steps["series"] = [f"{label} (L{level})" for label, level in zip(steps["label"], steps["level"])]
    palette = colours(steps["series"])
    timed = steps["geomean_speedup"].notna().any()  # CPU runs time nothing: no empty speed panel
    figure, axes = _panels(2 if timed else 1)
    left = axes[0]
    for series, line in steps.groupby("series", sort=True):
        left.plot(line["step"], line["correctness"], marker="o", markersize=3, label=series, color=palette[series])
        if timed:
            axes[1].plot(line["step"], line["geomean_speedup"], marker="o", markersize=3, color=palette[series])
    left.set(xlabel="refinement step", ylabel="correct so far (share of problems)", ylim=(0, 1.02))
    if timed:
        axes[1].set(xlabel="refinement step", ylabel="geomean best speedup so far")
        axes[1].axhline(1.0, color="grey", linewidth=0.8, linestyle=":")
    for axis in axes:
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    left.legend(fontsize=7)
    return _finish(figure, title)


def tokens_correctness_chart(points: pd.DataFrame, title: str = "Tokens against correctness per generator"):
    """Tokens per problem (log) against correctness; multi-sample generators as a curve over k."""
    points = points.dropna(subset=["tokens_per_problem"]) if not points.empty else points
    points = points[points["tokens_per_problem"] > 0] if not points.empty else points
    if points.empty:
        raise NoData("no record carries token usage")
    points = _labelled(points)
    points["series"] = [f"{label} (L{level})" for label, level in zip(points["label"], points["level"])]
    palette = colours(points["series"])
    figure, (axis,) = _panels(1, width=6.0, height=4.0)
    for series, line in points.groupby("series", sort=True):
        line = line.sort_values("k")
        axis.plot(line["tokens_per_problem"], line["correctness"], marker="o", markersize=4,
                  label=series, color=palette[series])
        if len(line) > 1:
            last = line.iloc[-1]
            axis.annotate(f"k={int(last['k'])}", (last["tokens_per_problem"], last["correctness"]), fontsize=6)
    axis.set_xscale("log")
    axis.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
    axis.xaxis.set_minor_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}" if str(value)[0] in "25" else ""))
    axis.set(xlabel="tokens per problem (log)", ylabel="correctness (share of problems)", ylim=(0, 1.02))
    axis.legend(fontsize=7)
    return _finish(figure, title)


def cost_speedup_chart(points: pd.DataFrame, title: str = "Cost against speedup"):
    """Per level, dollars per problem against geomean speedup with the Pareto front (cheaper and
    faster) drawn as a staircase (``tables.cost_speedup_points``)."""
    if points.empty:
        raise NoData("no entry has both a dollar cost and a measured speedup")
    if not (points["cost_per_problem"] > 0).any():
        raise NoData("every entry cost $0 (no priced usage): a cost axis would say nothing")
    levels = _levels(points)
    figure, axes = _panels(len(levels), width=4.8, height=3.8)
    for axis, level in zip(axes, levels):
        subset = points[points["level"] == level]
        on_front = subset["on_front"].astype(bool)
        axis.scatter(subset.loc[~on_front, "cost_per_problem"], subset.loc[~on_front, "geomean_speedup"],
                     color="grey", s=22, label="dominated")
        axis.scatter(subset.loc[on_front, "cost_per_problem"], subset.loc[on_front, "geomean_speedup"],
                     color="firebrick", s=26, label="Pareto front")
        for row in subset.itertuples():
            axis.annotate(row.label, (row.cost_per_problem, row.geomean_speedup), fontsize=6,
                          xytext=(3, 3), textcoords="offset points")
        front = pareto_front(list(zip(subset["cost_per_problem"], subset["geomean_speedup"])))
        axis.step([c for c, _ in front], [v for _, v in front], where="post", color="firebrick", linewidth=1)
        axis.set(title=f"Level {level}", xlabel="dollars per problem", ylabel="geomean speedup (correct kernels)")
        axis.margins(0.15)
    axes[0].legend(fontsize=7)
    return _finish(figure, title)


def confusion_chart(summary: dict | None):
    """The validator against the oracle: 2x2 confusion matrix and per-class accept/reject bars."""
    confusion = (summary or {}).get("confusion")
    if not isinstance(confusion, dict) or not {"tp", "tn", "fp", "fn"} <= set(confusion):
        raise NoData("no megakernel summary with a confusion matrix {tp, tn, fp, fn}")
    per_class = (summary or {}).get("per_class") or {}
    figure, axes = _panels(2 if per_class else 1, width=4.6, height=max(3.8, 1.2 + 0.22 * len(per_class)))
    _confusion_panel(axes[0], confusion)
    if per_class:
        _per_class_panel(axes[1], per_class)
    return _finish(figure, "Schedule validator against the exact oracle")


def _confusion_panel(axis, confusion: dict) -> None:
    # Positive = unsafe schedule; the validator "predicts unsafe" by rejecting it.
    matrix = np.array([[confusion["tp"], confusion["fn"]], [confusion["fp"], confusion["tn"]]], dtype=float)
    axis.imshow(matrix, cmap="Blues")
    names = [["rejected unsafe (TP)", "accepted unsafe (FN)"], ["rejected safe (FP)", "accepted safe (TN)"]]
    for row in range(2):
        for column in range(2):
            axis.text(column, row, f"{int(matrix[row, column])}\n{names[row][column]}", ha="center", va="center",
                      fontsize=7, color="white" if matrix[row, column] > matrix.max() / 2 else "black")
    axis.set_xticks([0, 1], ["validator: reject", "validator: accept"])
    axis.set_yticks([0, 1], ["oracle: unsafe", "oracle: safe"])
    axis.grid(False)


def _per_class_panel(axis, per_class: dict) -> None:
    names = sorted(per_class, reverse=True)  # barh draws bottom-up: this reads A to Z from the top
    rejected = [float(per_class[name].get("rejected", 0)) for name in names]
    accepted = [float(per_class[name].get("accepted", 0)) for name in names]
    axis.barh(names, rejected, color="firebrick", label="rejected")
    axis.barh(names, accepted, left=rejected, color="seagreen", label="accepted")
    for row, name in enumerate(names):  # call out disagreements with the oracle
        wrong = int(per_class[name].get("false_accept", 0)) + int(per_class[name].get("false_reject", 0))
        if wrong:
            axis.annotate(f"{wrong} wrong", (rejected[row] + accepted[row], row), fontsize=6, xytext=(3, -2),
                          textcoords="offset points", color="black")
    axis.set(xlabel="schedules", title="per class (oracle disagreements marked)")
    axis.tick_params(axis="y", labelsize=6 if len(names) > 12 else 8)
    axis.legend(fontsize=7)


def search_trajectory_chart(summary: dict | None):
    """Best schedule cost found against search iteration."""
    trajectory = (summary or {}).get("search_trajectory")
    if not isinstance(trajectory, list) or not trajectory:
        raise NoData("the megakernel summary has no schedule search trajectory (search.trajectory)")
    frame = pd.DataFrame(trajectory)
    if not {"iteration", "best_cost"} <= set(frame.columns):
        raise NoData("search trajectory entries need 'iteration' and 'best_cost'")
    frame = frame.sort_values("iteration")
    figure, (axis,) = _panels(1, width=6.0, height=3.6)
    axis.step(frame["iteration"], frame["best_cost"], where="post", color=PALETTE[0], label="best so far")
    if "cost" in frame and frame["cost"].notna().any():
        axis.scatter(frame["iteration"], frame["cost"], s=8, alpha=0.5, color=PALETTE[1], label="candidate")
    axis.set(xlabel="search iteration", ylabel="best schedule cost")
    axis.legend(fontsize=7)
    return _finish(figure, "Schedule search trajectory")
