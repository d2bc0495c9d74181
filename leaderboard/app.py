"""Crucible leaderboard: ``streamlit run leaderboard/app.py [-- --results DIR]``.

Boards per suite, level, device, precision, size and timer from the run files under ``results/``,
scored by ``harness.records.metrics`` (the same definitions as the figures and ``load_runs`` users): only
unflagged, own (not imported) results of contestants are ranked; baselines are reference rows;
flagged and imported results are shown beside. The results folder comes from ``--results``, else
``$CRUCIBLE_RESULTS``, else ``results``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script by streamlit: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402
import streamlit as st  # noqa: E402

from harness.records import metrics  # noqa: E402
from harness.errors import UserError  # noqa: E402
from leaderboard import charts, data, display, interactive, tables, views  # noqa: E402

BASELINES = {"eager": "PyTorch eager", "compile": "torch.compile", "best": "the faster of eager and torch.compile"}
RUNS = {"latest": "latest run per problem", "separate": "each run separately"}
ATTEMPTS = {"mean": "share of attempts (pass@1)", "best": "best of k attempts (pass@k)"}
TABS = ("Rankings", "Problems", "Runs", "Charts", "Flagged", "Megakernel")
FILTERS = (("suite", "Suite"), ("level", "Level"), ("hardware", "Device"), ("precision", "Precision"),
           ("size", "Size"), ("generator", "Generator"))
BIND = views.BIND  # every view has a URL: links can be shared, and screenshots taken per tab


def results_path() -> str:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--results")
    known, _ = parser.parse_known_args(sys.argv[1:])
    return known.results or os.environ.get("CRUCIBLE_RESULTS") or "results"


def files_stamp(results: str) -> tuple:
    """Names, sizes and times of the run files: the cache key, so new or grown runs reload."""
    try:
        folder = data.runs_folder(results)
    except UserError:
        return ()
    return tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*.jsonl")))


# cache_resource, not cache_data: the frame is shared read-only, never copied per rerun.
@st.cache_resource(show_spinner="Reading run files ...", max_entries=2)
def load(results: str, stamp: tuple) -> tuple[data.LoadResult, float, dict]:
    started = time.perf_counter()
    loaded = data.load_frame(results)
    return loaded, time.perf_counter() - started, tables.level_sizes(loaded.frame)


@st.cache_resource(max_entries=2)
def choices(results: str, stamp: tuple) -> dict:
    frame = load(results, stamp)[0].frame
    return {column: views.options(frame, column) for column, _ in FILTERS}


@st.cache_resource(max_entries=16)
def filtered(results: str, stamp: tuple, selection: tuple) -> pd.DataFrame:
    return apply_filters(load(results, stamp)[0].frame, dict(selection))


@st.cache_resource(max_entries=32)
def board(results: str, stamp: tuple, selection: tuple, baseline: str, runs: str, attempts: str, with_ci: bool):
    frame, sizes = filtered(results, stamp, selection), load(results, stamp)[2]
    ranked = tables.leaderboard(frame, baseline, with_ci, sizes, runs, attempts)
    return ranked, tables.imported_board(frame, baseline, sizes)


@st.cache_resource(max_entries=16)
def board_names(results: str, stamp: tuple, selection: tuple) -> dict[str, object]:
    """Board title -> the row positions of its own (not imported) records in the filtered frame."""
    frame = filtered(results, stamp, selection)
    own = frame[~frame["imported"] & frame["level"].notna()]
    groups = own.groupby(metrics.group_codes(own, tables.BOARD_KEYS), sort=False).indices
    titles = {display.board_title(*(own[k].iat[rows[0]] for k in tables.BOARD_KEYS)): own.index[rows]
              for rows in groups.values()}
    return dict(sorted(titles.items(), key=lambda item: (-len(item[1]), item[0])))  # the largest board first


@st.cache_resource(max_entries=32)
def board_frame(results: str, stamp: tuple, selection: tuple, title: str) -> pd.DataFrame:
    return filtered(results, stamp, selection).loc[board_names(results, stamp, selection)[title]]


@st.cache_resource(max_entries=32)
def grid(results: str, stamp: tuple, selection: tuple, title: str, baseline: str, runs: str, attempts: str):
    return tables.problem_grid(board_frame(results, stamp, selection, title), baseline, runs, attempts)


@st.cache_resource(max_entries=32)
def chart_data(results: str, stamp: tuple, selection: tuple, title: str, baseline: str, runs: str):
    frame, sizes = board_frame(results, stamp, selection, title), load(results, stamp)[2]
    return tables.fast_p_curves(frame, baseline, sizes=sizes, runs=runs), tables.best_speedups(frame, baseline, runs)


def pick_board(results: str, stamp: tuple, selection: tuple) -> str | None:
    """One board at a time for the heatmap and the charts: devices never share a chart."""
    names = list(board_names(results, stamp, selection))
    if not names:
        st.info("No ranked records match the filters.")
        return None
    return st.selectbox("Board", names, key="board", bind=BIND)


def apply_filters(frame: pd.DataFrame, selection: dict) -> pd.DataFrame:
    mask = pd.Series(True, index=frame.index)
    for column, chosen in selection.items():
        if chosen:
            mask &= frame[column].astype(object).astype(str).isin([str(c) for c in chosen])
    return frame[mask]


def choice(label: str, choices: dict, key: str) -> str:
    """A radio bound to the URL; a URL value it does not know is reported, not silently replaced."""
    asked = st.query_params.get(key)
    if asked is not None and asked not in choices:
        st.sidebar.warning(f"`?{key}={asked}` is not one of {', '.join(choices)}; showing {next(iter(choices))}.")
        del st.query_params[key]
    # The URL holds the option as the radio shows it, so the options are the short names and the
    # descriptions go to captions: with a format_func, ?baseline=compile would not match an option.
    return st.sidebar.radio(label, list(choices), captions=list(choices.values()), key=key, bind=BIND)


def sidebar(options: dict) -> tuple[dict, dict]:
    st.sidebar.header("Filters")
    selection = {}
    for column, label in FILTERS:
        selection[column] = tuple(st.sidebar.multiselect(label, options[column], key=column, bind=BIND))
    settings = {"baseline": choice("Speedup against", BASELINES, "baseline"),
                "runs": choice("Repeated runs", RUNS, "runs"),
                "attempts": choice("Several attempts per problem", ATTEMPTS, "attempts"),
                "with_ci": st.sidebar.checkbox("Bootstrap 95% intervals", value=False, key="intervals", bind=BIND)}
    return selection, settings


def rankings_tab(ranked: pd.DataFrame, imported: pd.DataFrame, settings: dict) -> None:
    st.caption(f"fast_1 = share of the level's problems correct with a speedup interval wholly above 1 against "
               f"{BASELINES[settings['baseline']]} (a point speedup of 1.001x is no win); geomean over correct "
               f"problems; {ATTEMPTS[settings['attempts']]}; {RUNS[settings['runs']]}. Excluded problems are not "
               f"scored; reference rows (baselines) are not ranked; — where not measured (CPU runs time nothing).")
    if ranked.empty:
        st.info("No ranked results match the filters.")
    for _, group in ranked.groupby([metrics._key(ranked[k]) for k in tables.BOARD_KEYS], sort=True):
        first = group.iloc[0]
        st.subheader(display.board_title(*(first[k] for k in tables.BOARD_KEYS)))
        if (group["rank_basis"] == "correctness").any():
            st.caption("Ranked by correctness: not every entry's speed was measured on this board.")
        st.table(display.ranking_display(group), hide_index=True)
    if not imported.empty:
        st.subheader("Imported results (published elsewhere, not ranked)")
        st.caption("Upstream files carry no timing intervals: their fast_1 uses point speedups.")
        for _, group in imported.groupby([metrics._key(imported[k]) for k in tables.BOARD_KEYS], sort=True):
            first = group.iloc[0]
            st.markdown(f"**{display.board_title(*(first[k] for k in tables.BOARD_KEYS))}**")
            st.table(display.ranking_display(group, ranked=False), hide_index=True)


def charts_tab(results: str, stamp: tuple, selection: tuple, settings: dict) -> None:
    """Interactive charts of one board: hover a line or mark for its numbers."""
    title = pick_board(results, stamp, selection)
    if title is None:
        return
    baseline, against = settings["baseline"], BASELINES[settings["baseline"]]
    curves, speedups = chart_data(results, stamp, selection, title, baseline, settings["runs"])
    shown = 0
    if curves["fast_p"].notna().any() and (curves["fast_p"].fillna(0) > 0).any():
        st.altair_chart(interactive.fast_p_lines(curves, f"fast_p · {title} · against {against}"))
        shown += 1
    if not speedups.empty:
        st.altair_chart(interactive.speedup_strip(speedups, f"Speedups · {title} · against {against}"))
        shown += 1
    ranked = board(results, stamp, selection, baseline, settings["runs"], settings["attempts"], False)[0]
    same = pd.Series([display.board_title(*(r[k] for k in tables.BOARD_KEYS)) == title
                      for r in ranked.to_dict("records")], index=ranked.index, dtype=bool)
    mine = ranked[(ranked["role"] == "ranked") & same]
    points = tables.cost_speedup_points(mine)
    points = points[points["cost_per_problem"] > 0] if not points.empty else points
    if not points.empty:
        st.altair_chart(interactive.cost_scatter(points, f"Cost against speedup · {title} · against {against}"))
        shown += 1
    if not shown:
        st.info("No chart to draw: no correct kernel has a measured speedup on this board.")


def flagged_tab(frame: pd.DataFrame) -> None:
    st.caption("Results with integrity findings: kept and shown, never ranked.")
    flagged = tables.flagged_records(frame)
    if flagged.empty:
        st.info("No flagged results match the filters.")
        return
    st.dataframe(flagged.drop(columns=["run_file", "line_index"]), hide_index=True, width="stretch")


def draw(build) -> None:
    try:
        st.image(charts.png_bytes(build()))
    except charts.NoData as reason:
        st.info(f"Chart skipped: {reason}.")


def megakernel_tab(summary: dict | None) -> None:
    view = data.megakernel_view(summary)
    if not view:
        st.info("No megakernel results yet (results/megakernel/summary.json).")
        return
    confusion = view.get("confusion", {})
    throughput = (summary.get("throughput") or {}) if isinstance(summary.get("throughput"), dict) else {}
    columns = st.columns(4)
    columns[0].metric("Schedules judged", display.count(sum(confusion.values()) if confusion else None))
    columns[1].metric("False accepts (unsafe passed)", display.count(confusion.get("fn")))
    columns[2].metric("False rejects (safe refused)", display.count(confusion.get("fp")))
    columns[3].metric("Validated per second", display.count(throughput.get("mixed_per_s")))
    draw(lambda: charts.confusion_chart(view))
    if view.get("per_class"):
        st.dataframe(pd.DataFrame(view["per_class"]).T, width="stretch")
    draw(lambda: charts.search_trajectory_chart(view))
    with st.expander("Full summary"):
        st.json(summary)


def main() -> None:
    started = time.perf_counter()
    st.set_page_config(page_title="Crucible leaderboard", layout="wide")
    st.title("Crucible leaderboard")
    results = results_path()
    stamp = files_stamp(results)
    try:
        loaded, seconds, _ = load(results, stamp)
    except UserError as error:
        st.error(str(error))
        return
    frame = loaded.frame
    if loaded.warnings:
        with st.expander(f"{len(loaded.warnings)} unreadable lines or files (skipped; every other record kept)"):
            for warning in loaded.warnings:
                st.warning(warning)
    st.caption(f"{len(frame):,} records from {loaded.files} run files in `{results}` (read in {seconds:.2f} s).")
    selection, settings = sidebar(choices(results, stamp))
    key = tuple(selection.items())
    tabs = dict(zip(TABS, st.tabs(list(TABS), key="tab", bind=BIND)))
    modes = (settings["baseline"], settings["runs"], settings["attempts"])
    with tabs["Rankings"]:
        if tabs["Rankings"].open:  # only the open tab is computed
            rankings_tab(*board(results, stamp, key, *modes, settings["with_ci"]), settings)
    with tabs["Problems"]:
        if tabs["Problems"].open:
            title = pick_board(results, stamp, key)
            if title is not None:
                views.problems_tab(board_frame(results, stamp, key, title), grid(results, stamp, key, title, *modes))
    with tabs["Runs"]:
        if tabs["Runs"].open:
            views.runs_tab(filtered(results, stamp, key))
    with tabs["Charts"]:
        if tabs["Charts"].open:
            charts_tab(results, stamp, key, settings)
    with tabs["Flagged"]:
        if tabs["Flagged"].open:
            flagged_tab(filtered(results, stamp, key))
    with tabs["Megakernel"]:
        if tabs["Megakernel"].open:
            megakernel_tab(data.load_megakernel_summary(results))
    runs = st.session_state["page_runs"] = st.session_state.get("page_runs", 0) + 1
    st.caption(f"Page computed in {time.perf_counter() - started:.2f} s (run {runs}).")


main()
