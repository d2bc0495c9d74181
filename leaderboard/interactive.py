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


def heatmap(grid: pd.DataFrame):
    """Generator x problem: grey cells where nothing was correct and timed, coloured by speedup
    (log, 1x in the middle) elsewhere; the tooltip says entry, problem, verdict, share correct and
    speedup. Clicking selects a cell (``cell``: entry and problem_id)."""
    import altair as alt

    data = grid[["entry", "problem_id", "speedup", "correct", "verdict", "n"]].copy()
    data["speedup_text"] = [display.times(v) for v in data["speedup"]]
    data["correct_text"] = [display.percent(v) for v in data["correct"]]
    data["speedup"] = data["speedup"].astype(object).where(data["speedup"].notna(), None)
    measured = [v for v in data["speedup"] if v is not None and v > 0]
    reach = max([1.25] + [max(v, 1 / v) for v in measured])  # symmetric on the log scale around 1x
    problems = data["problem_id"].nunique()
    pick = alt.selection_point(fields=["entry", "problem_id"], name="cell")
    base = alt.Chart(data).encode(
        x=alt.X("problem_id:N", title="problem", axis=alt.Axis(labels=problems <= 100, labelAngle=-70)),
        y=alt.Y("entry:N", title=None),
        tooltip=[alt.Tooltip("entry:N"), alt.Tooltip("problem_id:N", title="problem"), alt.Tooltip("verdict:N"),
                 alt.Tooltip("correct_text:N", title="correct (share)"),
                 alt.Tooltip("speedup_text:N", title="speedup"), alt.Tooltip("n:Q", title="attempts")])
    cells = base.mark_rect(color="#d9d9d9", stroke="white", strokeWidth=0.3).add_params(pick)
    colour = alt.Color("speedup:Q", title="speedup", scale=alt.Scale(
        type="log", scheme="redyellowgreen", domain=[1 / reach, reach], clamp=True))
    shaded = base.transform_filter("isValid(datum.speedup) && datum.speedup > 0").mark_rect(
        stroke="white", strokeWidth=0.3).encode(color=colour)
    height = 28 * data["entry"].nunique() + (110 if problems <= 100 else 30)
    width = min(1400, max(300, 12 * problems))
    return alt.layer(cells, shaded).properties(width=width, height=height)


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
    """One dot per problem and entry at its speedup (log), 1x marked; hover for the problem."""
    import altair as alt

    data = speedups.copy()
    data["entry"] = [display_entry(g, m) for g, m in zip(data["generator"], data["model"])]
    data["speedup_text"] = [display.times(v) for v in data["speedup"]]
    dots = alt.Chart(data).mark_circle(size=40, opacity=0.7).encode(
        x=alt.X("speedup:Q", scale=alt.Scale(type="log"), title="speedup of correct kernels (log)"),
        y=alt.Y("entry:N", title=None), yOffset=alt.YOffset("jitter:Q"),
        color=alt.Color("entry:N", legend=None, scale=alt.Scale(scheme="tableau20")),
        tooltip=["entry:N", alt.Tooltip("problem_id:N", title="problem"), alt.Tooltip("speedup_text:N", title="speedup")],
    ).transform_calculate(jitter="random() * 16 - 8")
    one = alt.Chart(pd.DataFrame({"x": [1.0]})).mark_rule(color="firebrick", strokeDash=[4, 3]).encode(x="x:Q")
    return alt.layer(dots, one, title=title).properties(height=40 * data["entry"].nunique() + 40)


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
