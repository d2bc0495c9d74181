"""The app's per-problem, per-attempt and per-run views (Streamlit), kept apart from app.py."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from harness.errors import UserError
from leaderboard import data, display, interactive, tables

BIND = "query-params"
TIMING_FIELDS = ("candidate_ms", "candidate_ms_iqr", "candidate_ms_ci", "candidate_n", "eager_ms", "eager_ms_ci",
                 "compile_ms", "compile_ms_ci", "speedup", "speedup_ci", "speedup_compile", "speedup_compile_ci",
                 "speedup_n", "sync_floor_ms", "sol_ms", "elapsed_s")


# Units in the headers and four significant digits, not raw 16-digit floats.
ATTEMPT_COLUMNS = {
    **{name: st.column_config.NumberColumn(f"{name.removesuffix('_ms')} (ms)", format="%.4g")
       for name in ("candidate_ms", "eager_ms", "compile_ms")},
    "speedup": st.column_config.NumberColumn("speedup vs eager", format="%.3gx"),
    "speedup_compile": st.column_config.NumberColumn("speedup vs compile", format="%.3gx"),
    "sol_fraction": st.column_config.NumberColumn("SOL fraction", format="percent"),
    "tokens": st.column_config.NumberColumn("tokens", format="%d"),
    "cost_usd": st.column_config.NumberColumn("cost", format="dollar"),
}


def options(frame: pd.DataFrame, column: str) -> list:
    return sorted(frame[column].dropna().unique().tolist(), key=str) if column in frame else []


def problems_tab(frame: pd.DataFrame, grid: pd.DataFrame) -> None:
    """The generator x problem heatmap of each board, then one problem's attempts and one attempt."""
    if frame.empty:
        st.info("No records match the filters.")
        return
    st.caption("Colour: speedup of the correct attempts (log, 1x in the middle; grey where no attempt was correct and timed). "
               "Hover for the verdict; click a cell to open that problem below.")
    picked = None
    if not grid.empty:
        event = st.altair_chart(interactive.heatmap(grid), on_select="rerun", key="heatmap")
        cells = (event or {}).get("selection", {}).get("cell") or []
        picked = cells[0].get("problem_id") if cells else None
    problems = options(frame, "problem_id")
    # A click opens its problem once; the selection stays on the chart, so apply it only when it
    # changes, or it would undo every later choice in the selector below.
    if picked in problems and picked != st.session_state.get("heatmap_applied"):
        st.session_state["problem"] = st.session_state["heatmap_applied"] = picked
    problem = st.selectbox("Problem", problems, key="problem", bind=BIND)
    attempts = tables.problem_rows(frame[frame["problem_id"] == problem])
    st.dataframe(attempts.drop(columns=["run_file", "line_index"]), hide_index=True, width="stretch",
                 column_config=ATTEMPT_COLUMNS)
    labels = [f"{row.generator} / {display.DASH if display.missing(row.model) else row.model} · attempt "
              f"{row.attempt} · {row.status} · run {row.run_id}" for row in attempts.itertuples()]
    if not labels:
        return
    chosen = st.selectbox("Attempt", range(len(labels)), format_func=labels.__getitem__, key="attempt")
    row = attempts.iloc[chosen]
    try:
        show_record(data.full_record(row["run_file"], int(row["line_index"]), row["problem_id"]))
    except (UserError, OSError, ValueError) as error:
        st.error(f"Cannot read this attempt back from its run file: {error}")


def show_record(record: dict) -> None:
    verdict = "correct" if record.get("correct") else record.get("status", "?")
    columns = st.columns(4)
    columns[0].metric("Verdict", verdict)
    columns[1].metric("Candidate (median)", display.timing_text("candidate_ms", record["candidate_ms"])
                      if record.get("candidate_ms") is not None else display.DASH)
    columns[2].metric("Speedup vs eager", display.times(record.get("speedup")))
    columns[3].metric("Speedup vs compile", display.times(record.get("speedup_compile")))
    if record.get("speed_verdict"):
        st.caption(f"Speed against eager, from the alternating measurement: {record['speed_verdict']}")
    if record.get("excluded"):
        st.info(f"Excluded problem (shown, never scored): {record['excluded']}")
    for flag in record.get("flags") or []:
        st.error(f"Flag `{flag}` (never ranked): {display.flag_meaning(flag)}")
    if record.get("reason"):
        st.warning(record["reason"])
    for remark in record.get("remarks") or []:
        st.caption(remark)
    timings = {k: record.get(k) for k in TIMING_FIELDS if record.get(k) is not None}
    if timings:
        st.table(pd.DataFrame({"value": [display.timing_text(k, v) for k, v in timings.items()]},
                              index=list(timings)))
    missing = "(the run's details file is missing: source and transcript were not copied along)"
    st.code(record.get("candidate_source") or (missing if record.get("details_missing") else "(no source recorded)"),
            language="python")
    for step in record.get("transcript") or []:
        title = f"step {step.get('step', '?')}: {step.get('verdict', step.get('role', ''))}" if isinstance(step, dict) else "step"
        with st.expander(title):
            st.json(step)
    usage = record.get("usage") if isinstance(record.get("usage"), dict) else {}
    if usage:
        st.caption("Usage: " + ", ".join(f"{k} {display.count(v) if k != 'cost_usd' else display.dollars(v)}"
                                         for k, v in usage.items() if isinstance(v, (int, float)) and not isinstance(v, bool)))
    with st.expander("Provenance, usage and checks"):
        st.json({k: record.get(k) for k in ("provenance", "usage", "checks", "run_id", "candidate_sha")})


def run_table(frame: pd.DataFrame) -> pd.DataFrame:
    columns = ["run_id", "run_created", "run_commit", "hardware", "timer", "precision", "size", "generator",
               "model", "settings", "run_file"]
    present = [c for c in columns if c in frame]
    runs = frame.groupby("run_file", sort=False).agg(
        **{c: (c, "first") for c in present if c != "run_file"}, records=("problem_id", "size"),
        correct=("correct", "sum"))
    return runs.reset_index().sort_values("run_created", ascending=False, na_position="last", kind="stable")


def runs_tab(frame: pd.DataFrame) -> None:
    """Every run file: when, which commit, card, timer and settings; one run's header in full."""
    if frame.empty:
        st.info("No records match the filters.")
        return
    runs = run_table(frame)
    st.dataframe(runs, hide_index=True, width="stretch")
    ids = runs["run_id"].astype(str).tolist()
    run = st.selectbox("Run", ids, key="run", bind=BIND)
    row = runs[runs["run_id"].astype(str) == run].iloc[0]
    columns = st.columns(4)
    columns[0].metric("Records", display.count(row["records"]))
    columns[1].metric("Correct", display.count(row["correct"]))
    columns[2].metric("Card", str(row.get("hardware") or display.DASH))
    columns[3].metric("Commit", str(row.get("run_commit") or display.DASH)[:10])
    try:
        header = data.run_header(row["run_file"])
    except (UserError, OSError) as error:
        st.error(str(error))
        return
    st.caption(f"Run file: `{row['run_file']}`")
    st.json(json.loads(json.dumps(header, default=str)))
