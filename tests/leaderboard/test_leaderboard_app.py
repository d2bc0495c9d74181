"""The Streamlit app, driven through Streamlit's app-testing API."""

from pathlib import Path

import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from leaderboard_fixtures import L1, L2, build_results  # noqa: E402

APP = str(Path(__file__).resolve().parents[2] / "leaderboard" / "app.py")


def run_app(monkeypatch, results, tab: str | None = None) -> AppTest:
    """The app rendered over ``results``, with ``tab`` open (as the URL's ?tab= would open it)."""
    monkeypatch.setenv("CRUCIBLE_RESULTS", str(results))
    app = AppTest.from_file(APP, default_timeout=120)
    if tab:
        app.query_params["tab"] = tab
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return app


@pytest.fixture()
def app(monkeypatch, results_dir):
    """A fresh app for tests that click (widgets change its state)."""
    return run_app(monkeypatch, results_dir)


@pytest.fixture(scope="module")
def shown(results_dir):
    """One rendered rankings page shared by the tests that only read it."""
    with pytest.MonkeyPatch.context() as patch:
        yield run_app(patch, results_dir)


REFERENCE_ROWS = ["PyTorch eager (reference)", "inductor (reference)", "torch.compile (reference)"]


def ranking_generators(app, index=0):
    return list(app.table[index].value["generator"])


def open_tab(app, name):
    app.session_state["tab"] = name
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def test_rankings_render_one_table_per_board_in_rank_order(shown):
    titles = [header.value for header in shown.subheader]
    assert titles[:2] == ["kernelbench · Level 1 · NVIDIA H200 · fp32 · size full",
                          "kernelbench · Level 2 · NVIDIA H200 · fp32 · size full"]
    assert ranking_generators(shown, 0) == ["mkevolve", "kforge", "direct", *REFERENCE_ROWS]
    assert ranking_generators(shown, 1)[:3] == ["kforge", "mkevolve", "direct"]
    assert list(shown.table[0].value["rank"]) == ["1", "2", "3", "—", "—", "—"]


def test_imported_results_appear_in_their_own_unranked_table(shown):
    assert "Imported results (published elsewhere, not ranked)" in [h.value for h in shown.subheader]
    imported = shown.table[2].value
    assert list(imported["generator"]) == ["upstream-published"] and "rank" not in imported.columns


def test_only_the_open_tab_is_computed(shown):
    assert not shown.get("image") and not shown.dataframe


def test_flagged_tab_lists_flagged_results_with_their_flags(app):
    flagged = open_tab(app, "Flagged").dataframe[0].value
    assert list(flagged["flags"]) == ["below_sol"] and list(flagged["problem_id"]) == [L1[0]]


def test_generator_filter_narrows_the_rankings(app):
    app.sidebar.multiselect(key="generator").set_value(["direct", "kforge"]).run()
    assert ranking_generators(app, 0) == ["kforge", "direct", "PyTorch eager (reference)", "torch.compile (reference)"]
    assert app.table[0].value.iloc[1]["correct / problems"] == "2/4 (50.0%)"  # the whole level stays the denominator


def test_speedup_baseline_switch_reranks_against_the_faster_baseline(app):
    app.sidebar.radio(key="baseline").set_value("best").run()
    level2 = app.table[1].value.set_index("generator")
    assert level2.loc["inductor (reference)", "fast_1"].startswith("0.0%")
    assert level2.loc["kforge", "geomean speedup"].startswith("1.28x")


def test_problem_drill_down_shows_source_verdict_and_transcript(app):
    open_tab(app, "Problems")
    app.selectbox(key="board").set_value("kernelbench · Level 2 · NVIDIA H200 · fp32 · size full").run()
    app.selectbox(key="problem").set_value(L2[0]).run()
    labels = app.selectbox(key="attempt").options  # formatted: "generator / model · attempt n · status"
    kforge = next(i for i, label in enumerate(labels) if label.startswith("kforge"))
    app.selectbox(key="attempt").set_value(kforge).run()
    assert any(f"kforge {L2[0]}" in code.value for code in app.code)
    assert [e.label for e in app.expander][:4] == ["step 0: compile_error", "step 1: incorrect", "step 2: ok", "step 3: ok"]
    assert app.metric[0].value == "correct"


def test_charts_tab_draws_interactive_fast_p_speedup_and_cost_charts(monkeypatch, results_dir):
    charts = run_app(monkeypatch, results_dir, tab="Charts")
    drawn = charts.get("vega_lite_chart")
    assert len(drawn) == 3 and not charts.info  # fast_p, speedups and cost of the first board (level 1)


def test_megakernel_tab_draws_when_a_summary_exists_and_explains_when_not(monkeypatch, results_dir, tmp_path):
    drawn = run_app(monkeypatch, results_dir, tab="Megakernel")
    assert len(drawn.get("image")) == 2 and drawn.dataframe[0].value.loc["cycle", "rejected"] == 10
    assert drawn.metric[1].value == "3"  # false accepts
    bare = run_app(monkeypatch, build_results(tmp_path, megakernel=False), tab="Megakernel")
    assert any("No megakernel results" in info.value for info in bare.info)


def test_missing_results_folder_is_reported_not_raised(monkeypatch, tmp_path):
    app = run_app(monkeypatch, tmp_path / "absent")
    assert "no such results folder" in app.error[0].value


def test_module_entry_point_passes_results_after_streamlits_separator(monkeypatch):
    import leaderboard.__main__ as entry

    calls = []
    monkeypatch.setattr(entry.subprocess, "call", lambda command: calls.append(command) or 0)
    assert entry.main(["--server.port", "9000", "--results", "some/dir"]) == 0
    command = calls[0]
    assert command[command.index("run") + 1].endswith("app.py")
    assert command[-5:] == ["--server.port", "9000", "--", "--results", "some/dir"]
