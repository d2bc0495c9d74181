"""Interactive charts for the app (Vega-Lite through altair, which ships with Streamlit): tooltips
on every mark, one chart per board so CPU results never share axes with GPU results."""

from __future__ import annotations

import pandas as pd

from leaderboard import display

BOARD = ["suite", "level", "hardware", "precision", "size", "timer"]


def board_label(row) -> str:
    return display.board_title(*(row.get(k) for k in BOARD))


def split_boards(table: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(title, rows) per board: devices, precisions, sizes and timers are never mixed."""
    if table.empty:
        return []
    keys = [table[k].astype(object).where(table[k].notna(), "").astype(str) for k in BOARD]
    return [(board_label(group.iloc[0].to_dict()), group) for _, group in table.groupby(keys, sort=True)]


def heatmap(grid: pd.DataFrame, metric: str = "speedup"):
    """Generator x problem: colour is the speedup (log) of correct attempts, or the verdict; the
    tooltip says entry, problem, verdict, share correct and speedup. Clicking selects a cell."""
    import altair as alt

    data = grid[["entry", "problem_id", "speedup", "correct", "verdict", "n"]].copy()
    data["speedup_text"] = [display.times(v) for v in data["speedup"]]
    data["correct_text"] = [display.percent(v) for v in data["correct"]]
    pick = alt.selection_point(fields=["entry", "problem_id"], name="cell")
    colour = (alt.Color("speedup:Q", scale=alt.Scale(type="log", scheme="redyellowgreen", domainMid=1.0),
                        title="speedup") if metric == "speedup"
              else alt.Color("verdict:N", title="verdict"))
    width = min(1400, max(300, 9 * data["problem_id"].nunique()))
    return (alt.Chart(data).mark_rect(stroke="white", strokeWidth=0.3)
            .encode(x=alt.X("problem_id:N", title="problem", axis=alt.Axis(labels=width > 600, labelAngle=-70)),
                    y=alt.Y("entry:N", title=None), color=colour,
                    tooltip=[alt.Tooltip("entry:N"), alt.Tooltip("problem_id:N", title="problem"),
                             alt.Tooltip("verdict:N"), alt.Tooltip("correct_text:N", title="correct (share)"),
                             alt.Tooltip("speedup_text:N", title="speedup"), alt.Tooltip("n:Q", title="attempts")])
            .add_params(pick).properties(width=width, height=max(80, 22 * data["entry"].nunique())))


def fast_p_lines(curves: pd.DataFrame, title: str):
    import altair as alt

    data = curves.dropna(subset=["fast_p"]).copy()
    data["entry"] = [display_entry(g, m) for g, m in zip(data["generator"], data["model"])]
    data["fast_p_text"] = [display.percent(v) for v in data["fast_p"]]
    hover = alt.selection_point(fields=["entry"], on="pointerover", nearest=True)
    base = alt.Chart(data, title=title).encode(
        x=alt.X("p:Q", title="speedup threshold p (interval must clear it)"),
        y=alt.Y("fast_p:Q", title="fast_p", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("entry:N", scale=alt.Scale(scheme="tableau20")),
        tooltip=["entry:N", alt.Tooltip("p:Q", format=".2f"), alt.Tooltip("fast_p_text:N", title="fast_p")])
    return (base.mark_line().encode(opacity=alt.condition(hover, alt.value(1), alt.value(0.5)))
            + base.mark_point(size=18, filled=True).add_params(hover)).properties(height=280)


def speedup_strip(speedups: pd.DataFrame, title: str):
    import altair as alt

    data = speedups.copy()
    data["entry"] = [display_entry(g, m) for g, m in zip(data["generator"], data["model"])]
    data["speedup_text"] = [display.times(v) for v in data["speedup"]]
    return alt.Chart(data, title=title).mark_tick(thickness=2).encode(
        x=alt.X("speedup:Q", scale=alt.Scale(type="log"), title="speedup of correct kernels (log)"),
        y=alt.Y("entry:N", title=None), color=alt.Color("entry:N", legend=None, scale=alt.Scale(scheme="tableau20")),
        tooltip=["entry:N", alt.Tooltip("problem_id:N", title="problem"), alt.Tooltip("speedup_text:N", title="speedup")],
    ).properties(height=max(80, 26 * data["entry"].nunique()))


def cost_scatter(points: pd.DataFrame, title: str):
    import altair as alt

    data = points.copy()
    return alt.Chart(data, title=title).mark_circle(size=70).encode(
        x=alt.X("cost_per_problem:Q", title="dollars per problem"),
        y=alt.Y("geomean_speedup:Q", title="geomean speedup (correct kernels)"),
        color=alt.Color("on_front:N", title="Pareto front"),
        tooltip=["label:N", alt.Tooltip("cost_per_problem:Q", format="$.4f"),
                 alt.Tooltip("geomean_speedup:Q", format=".2f")]).properties(height=280)


def display_entry(generator, model) -> str:
    return str(generator) if display.missing(model) or model == "" else f"{generator} / {model}"
