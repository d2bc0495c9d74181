"""Crucible leaderboard: ``streamlit run leaderboard/app.py [-- --results DIR]``.

Rankings per suite, level, hardware and precision from the run files under ``results/``; only
unflagged, own (not imported) results are ranked; flagged and imported results are shown beside.
The results folder comes from ``--results``, else ``$CRUCIBLE_RESULTS``, else ``results``.
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

from harness.errors import UserError  # noqa: E402
from leaderboard import charts, data, display, tables  # noqa: E402

BASELINES = {"eager": "PyTorch eager", "compile": "torch.compile", "best": "the faster of eager and torch.compile"}
TIMING_FIELDS = ("candidate_ms", "candidate_ms_iqr", "candidate_ms_ci", "candidate_n", "eager_ms", "compile_ms",
                 "sol_ms", "sol_fraction", "flops", "bytes", "elapsed_s")
TABS = ("Rankings", "Problems", "Charts", "Flagged", "Megakernel")
BIND = "query-params"  # every view has a URL: links can be shared, and screenshots taken per tab


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


@st.cache_data(show_spinner="Reading run files ...", max_entries=4)
def load(results: str, stamp: tuple) -> tuple[data.LoadResult, float]:
    started = time.perf_counter()
    loaded = data.load_frame(results)
    return loaded, time.perf_counter() - started


@st.cache_data(max_entries=32)
def board(results: str, stamp: tuple, selection: tuple, baseline: str, with_ci: bool):
    frame = apply_filters(load(results, stamp)[0].frame, dict(selection))
    sizes = tables.level_sizes(load(results, stamp)[0].frame)
    return tables.leaderboard(frame, baseline, with_ci, sizes), tables.imported_board(frame, baseline, sizes)


def apply_filters(frame: pd.DataFrame, selection: dict) -> pd.DataFrame:
    mask = pd.Series(True, index=frame.index)
    for column, chosen in selection.items():
        if chosen:
            mask &= frame[column].astype(object).isin(list(chosen))
    return frame[mask]


def options(frame: pd.DataFrame, column: str) -> list:
    return sorted(frame[column].dropna().unique().tolist(), key=str)


def sidebar(frame: pd.DataFrame) -> tuple[dict, str, bool]:
    st.sidebar.header("Filters")
    selection = {}
    for column, label in (("suite", "Suite"), ("level", "Level"), ("hardware", "Hardware"),
                          ("precision", "Precision"), ("generator", "Generator")):
        selection[column] = tuple(st.sidebar.multiselect(label, options(frame, column), key=column, bind=BIND))
    baseline = st.sidebar.radio("Speedup against", list(BASELINES), format_func=BASELINES.get, key="baseline",
                                bind=BIND)
    with_ci = st.sidebar.checkbox("Bootstrap 95% intervals", value=True, key="intervals", bind=BIND)
    return selection, baseline, with_ci


def rankings_tab(ranked: pd.DataFrame, imported: pd.DataFrame, baseline: str) -> None:
    st.caption(f"Ranked: unflagged Crucible results. fast_1 = share of the whole level correct and faster "
               f"than {BASELINES[baseline]} (strict); geomean over correct problems; best of k attempts; "
               f"— where not measured (CPU runs time nothing: Triton kernels run in its interpreter there).")
    if ranked.empty:
        st.info("No ranked results match the filters.")
    for key, group in ranked.groupby(list(tables.BOARD_KEYS), dropna=False, sort=True):
        st.subheader(display.board_title(*key))
        st.table(display.ranking_display(group), hide_index=True)
    if not imported.empty:
        st.subheader("Imported results (published elsewhere, not ranked)")
        for key, group in imported.groupby(list(tables.BOARD_KEYS), dropna=False, sort=True):
            st.markdown(f"**{display.board_title(*key)}**")
            st.table(display.ranking_display(group, ranked=False), hide_index=True)


def problems_tab(frame: pd.DataFrame) -> None:
    if frame.empty:
        st.info("No records match the filters.")
        return
    problem = st.selectbox("Problem", options(frame, "problem_id"), key="problem", bind=BIND)
    attempts = tables.problem_rows(frame[frame["problem_id"] == problem])
    shown = attempts.drop(columns=["run_file", "line_index"])
    st.dataframe(shown, hide_index=True, width="stretch")
    labels = [f"{row.generator} / {display.DASH if display.missing(row.model) else row.model} · attempt "
              f"{row.attempt} · {row.status}" for row in attempts.itertuples()]
    chosen = st.selectbox("Attempt", range(len(labels)), format_func=labels.__getitem__, key="attempt")
    row = attempts.iloc[chosen]
    show_record(data.full_record(row["run_file"], int(row["line_index"]), row["problem_id"]))


def show_record(record: dict) -> None:
    verdict = "correct" if record.get("correct") else record.get("status", "?")
    columns = st.columns(4)
    columns[0].metric("Verdict", verdict)
    columns[1].metric("Candidate (median ms)", display.count(None) if record.get("candidate_ms") is None
                      else f"{record['candidate_ms']:.4g}")
    columns[2].metric("Speedup vs eager", display.times(record.get("speedup")))
    columns[3].metric("Speedup vs compile", display.times(record.get("speedup_compile")))
    if record.get("flags"):
        st.error("Flags (never ranked): " + ", ".join(record["flags"]))
    if record.get("reason"):
        st.warning(record["reason"])
    for remark in record.get("remarks") or []:
        st.caption(remark)
    timings = {k: record.get(k) for k in TIMING_FIELDS if record.get(k) is not None}
    if timings:
        st.table(pd.DataFrame({"value": [str(v) for v in timings.values()]}, index=list(timings)))
    missing = "(the run's details file is missing: source and transcript were not copied along)"
    st.code(record.get("candidate_source") or (missing if record.get("details_missing") else "(no source recorded)"),
            language="python")
    for step in record.get("transcript") or []:
        title = f"step {step.get('step', '?')}: {step.get('verdict', step.get('role', ''))}" if isinstance(step, dict) else "step"
        with st.expander(title):
            st.json(step)
    with st.expander("Provenance, usage and checks"):
        st.json({k: record.get(k) for k in ("provenance", "usage", "checks", "run_id", "candidate_sha")})


CHARTS = ("fast_p", "speedup_distribution", "cost_speedup")


@st.cache_data(max_entries=64, show_spinner="Drawing ...")
def chart_png(kind: str, results: str, stamp: tuple, selection: tuple, baseline: str) -> bytes | str:
    """A chart as PNG bytes, or the reason it cannot be drawn; cached, as drawing is the slow part."""
    full = load(results, stamp)[0].frame
    own = apply_filters(full, dict(selection))
    own = own[~own["imported"]]
    sizes = tables.level_sizes(full)
    builders = {
        "fast_p": lambda: charts.fast_p_chart(tables.fast_p_curves(own, baseline, sizes=sizes),
                                              f"fast_p against p (speedup against {BASELINES[baseline]})"),
        "speedup_distribution": lambda: charts.speedup_distribution_chart(tables.best_speedups(own, baseline),
                                                                          BASELINES[baseline]),
        "cost_speedup": lambda: charts.cost_speedup_chart(
            tables.cost_speedup_points(board(results, stamp, selection, baseline, False)[0])),
    }
    try:
        return charts.png_bytes(builders[kind]())
    except charts.NoData as reason:
        return str(reason)


def show_chart(png_or_reason: bytes | str) -> None:
    if isinstance(png_or_reason, bytes):
        st.image(png_or_reason)
    else:
        st.info(f"Chart skipped: {png_or_reason}.")


def charts_tab(results: str, stamp: tuple, selection: tuple, baseline: str) -> None:
    for kind in CHARTS:
        show_chart(chart_png(kind, results, stamp, selection, baseline))


def draw(build) -> None:
    try:
        show_chart(charts.png_bytes(build()))
    except charts.NoData as reason:
        show_chart(str(reason))


def flagged_tab(frame: pd.DataFrame) -> None:
    st.caption("Results with integrity findings: kept and shown, never ranked.")
    flagged = tables.flagged_records(frame)
    if flagged.empty:
        st.info("No flagged results match the filters.")
        return
    st.dataframe(flagged.drop(columns=["run_file", "line_index"]), hide_index=True, width="stretch")


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
    st.set_page_config(page_title="Crucible leaderboard", layout="wide")
    st.title("Crucible leaderboard")
    results = results_path()
    stamp = files_stamp(results)
    try:
        loaded, seconds = load(results, stamp)
    except UserError as error:
        st.error(str(error))
        return
    frame = loaded.frame
    for warning in loaded.warnings:
        st.warning(warning)
    st.caption(f"{len(frame):,} records from {loaded.files} run files in `{results}` (read in {seconds:.2f} s).")
    selection, baseline, with_ci = sidebar(frame)
    filtered = apply_filters(frame, selection)
    tabs = dict(zip(TABS, st.tabs(list(TABS), key="tab", bind=BIND)))
    with tabs["Rankings"]:
        if tabs["Rankings"].open:  # only the open tab is computed
            rankings_tab(*board(results, stamp, tuple(selection.items()), baseline, with_ci), baseline)
    with tabs["Problems"]:
        if tabs["Problems"].open:
            problems_tab(filtered)
    with tabs["Charts"]:
        if tabs["Charts"].open:
            charts_tab(results, stamp, tuple(selection.items()), baseline)
    with tabs["Flagged"]:
        if tabs["Flagged"].open:
            flagged_tab(filtered)
    with tabs["Megakernel"]:
        if tabs["Megakernel"].open:
            megakernel_tab(data.load_megakernel_summary(results))

main()
