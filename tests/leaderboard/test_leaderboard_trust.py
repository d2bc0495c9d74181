"""Ranks that can be trusted: each defect of the old board, pinned through the tables and the app."""

from pathlib import Path

import pandas as pd
import pytest

from harness.records.results import RunWriter
from leaderboard import data, tables
from leaderboard_fixtures import L1, header, record

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(Path(__file__).resolve().parents[2] / "leaderboard" / "app.py")
PROBLEMS = [f"L2/{i}_P{i}" for i in range(1, 5)]


def write_run(root: Path, generator: str, run_id: str, rows: list[dict], created: str | None = None, **config):
    head = header(generator, run_id)
    head["config"].update(config)
    path = root / "runs" / f"{run_id}_kernelbench_{generator}.jsonl"
    writer = RunWriter(path, head)
    if created:  # the header's creation time orders reruns; set it explicitly for the test
        lines = path.read_text().splitlines()
        import json

        first = json.loads(lines[0])
        first["created"] = created
        path.write_text(json.dumps(first) + "\n")
    for row in rows:
        writer.append(row)
    return path


def app_over(monkeypatch, root: Path, **params) -> AppTest:
    monkeypatch.setenv("CRUCIBLE_RESULTS", str(root))
    app = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        app.query_params[key] = value
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def shown_rows(app, index=0) -> dict:
    return {row["generator"]: row for row in app.table[index].value.to_dict("records")}


@pytest.fixture()
def excluded_results(tmp_path):
    """Four L2 problems; the last is excluded by the suite (and 'solved' at 9x by every entry)."""
    for generator in ("mkevolve", "direct"):
        rows = [record(p, generator, "m", speedup=1.5) for p in PROBLEMS[:3]]
        rows.append(record(PROBLEMS[3], generator, "m", speedup=9.0, excluded="degenerate by construction"))
        write_run(tmp_path, generator, f"2025010{len(generator) % 9}T000000Z-{generator}", rows)
    return tmp_path


def test_excluded_problems_are_not_scored_in_the_app(monkeypatch, excluded_results):
    app = app_over(monkeypatch, excluded_results)
    row = shown_rows(app)["mkevolve"]
    assert row["correct / problems"] == "3/3 (100.0%)" and row["geomean speedup"] == "1.50x"
    problems = app_over(monkeypatch, excluded_results, tab="Problems", problem=PROBLEMS[3])
    assert any("Excluded problem" in info.value for info in problems.info)  # still shown in the drill-down


@pytest.fixture()
def rerun_results(tmp_path):
    """kforge ran twice: an older run that solved everything at 2x, a newer one that solved half."""
    old = [record(p, "kforge", "m", speedup=2.0) for p in PROBLEMS]
    new = [record(p, "kforge", "m", correct=i < 2, speedup=1.5) for i, p in enumerate(PROBLEMS)]
    write_run(tmp_path, "kforge", "20250101T000000Z-old", old, created="2025-01-01T00:00:00+00:00")
    write_run(tmp_path, "kforge", "20250201T000000Z-new", new, created="2025-02-01T00:00:00+00:00")
    write_run(tmp_path, "reference", "20250101T000000Z-ref", [record(p, "reference", speedup=1.0) for p in PROBLEMS])
    return tmp_path


def test_reruns_are_not_merged_best_of_k_the_latest_run_counts(rerun_results):
    board = tables.leaderboard(data.load_frame(rerun_results).frame)
    kforge = board[board["generator"] == "kforge"]
    assert len(kforge) == 1 and kforge.iloc[0]["runs"] == 1
    assert kforge.iloc[0]["correct"] == 2 and kforge.iloc[0]["geomean_speedup"] == pytest.approx(1.5)


def test_reruns_can_be_shown_separately_and_reference_is_never_ranked(monkeypatch, rerun_results):
    app = app_over(monkeypatch, rerun_results, runs="separate")
    table = app.table[0].value
    kforge = table[table["generator"] == "kforge"]
    assert sorted(kforge["correct / problems"]) == ["2/4 (50.0%)", "4/4 (100.0%)"]
    reference = table[table["generator"] == "reference (reference)"]
    assert list(reference["rank"]) == ["—"]


def noisy_results(tmp_path):
    rows = [record(p, "noisy", "m", speedup=1.001, speedup_ci=[0.98, 1.02]) for p in PROBLEMS]
    write_run(tmp_path, "noisy", "20250101T000000Z-noisy", rows)
    rows = [record(p, "clear", "m", speedup=1.05, speedup_ci=[1.01, 1.09]) for p in PROBLEMS]
    write_run(tmp_path, "clear", "20250101T000000Z-clear", rows)
    return tmp_path


def test_fast_1_is_noise_aware_in_the_app(monkeypatch, tmp_path):
    rows = shown_rows(app_over(monkeypatch, noisy_results(tmp_path)))
    assert rows["noisy"]["fast_1"] == "0.0%" and rows["clear"]["fast_1"] == "100.0%"
    assert rows["clear"]["rank"] == "1" and rows["noisy"]["rank"] == "2"


def test_size_and_timer_are_part_of_the_board(tmp_path):
    write_run(tmp_path, "direct", "20250101T000000Z-a", [record(p, "direct", "m", speedup=1.5) for p in PROBLEMS],
              timer="cuda_events")
    small = [{**record(p, "direct", "m", speedup=1.5), "size": "small"} for p in PROBLEMS]
    write_run(tmp_path, "direct", "20250101T000000Z-b", small, size="small", timer="cuda_events")
    write_run(tmp_path, "direct", "20250101T000000Z-c", [record(p, "direct", "m", speedup=1.5) for p in PROBLEMS],
              timer="cuda_events+sm_hold")
    board = tables.leaderboard(data.load_frame(tmp_path).frame)
    ranked = board[board["role"] == "ranked"]
    assert sorted(zip(ranked["size"], ranked["timer"])) == [
        ("full", "cuda_events"), ("full", "cuda_events+sm_hold"), ("small", "cuda_events")]
    assert list(ranked["rank"]) == [1, 1, 1]


def test_untimed_cpu_boards_rank_by_correctness(tmp_path):
    """On CPU nothing is timed for Triton kernels; an 8%-correct timed baseline cannot outrank a
    99%-correct untimed generator, and an untimed entry is not last for lack of speed."""
    problems = [f"L1/{i}_P{i}" for i in range(1, 101)]
    cpu = dict(device="CPU x")
    kforge = [record(p, "kforge", "m", speedup=None) for p in problems[:99]]
    kforge.append(record(problems[99], "kforge", "m", correct=False))
    write_run(tmp_path, "kforge", "20250101T000000Z-k", kforge, **cpu)
    direct = [record(p, "direct", "m", correct=i < 8, speedup=1.2) for i, p in enumerate(problems)]
    write_run(tmp_path, "direct", "20250101T000000Z-d", direct, **cpu)
    board = tables.leaderboard(data.load_frame(tmp_path).frame)
    ranked = board[board["role"] == "ranked"].set_index("generator")
    assert ranked.loc["kforge", "rank"] == 1 and ranked.loc["direct", "rank"] == 2
    assert set(ranked["rank_basis"]) == {"correctness"} and pd.isna(ranked.loc["kforge", "fast_1"])


def test_baseline_in_the_url_is_used_not_replaced(monkeypatch, results_dir):
    app = app_over(monkeypatch, results_dir, baseline="compile")
    assert app.sidebar.radio(key="baseline").value == "compile"
    level1 = shown_rows(app, 0)
    assert level1["mkevolve"]["geomean speedup"] == "1.12x"  # 1.4 x 0.8: against torch.compile
    assert "against torch.compile" in app.caption[1].value or any("torch.compile" in c.value for c in app.caption)


def test_an_unknown_baseline_in_the_url_says_so(monkeypatch, results_dir):
    app = app_over(monkeypatch, results_dir, baseline="fastest")
    assert any("?baseline=fastest" in w.value for w in app.sidebar.warning)
    assert app.sidebar.radio(key="baseline").value == "eager"


def test_attempted_is_shown_beside_correct(monkeypatch, results_dir):
    row = shown_rows(app_over(monkeypatch, results_dir), 1)["direct"]
    assert row["correct / problems"] == "0/3 (0.0%)" and row["attempted"] == "3/3"


def test_problems_tab_draws_the_generator_by_problem_heatmap(monkeypatch, results_dir):
    app = app_over(monkeypatch, results_dir, tab="Problems")
    assert len(app.get("vega_lite_chart")) == 1  # the chosen board's grid
    assert len(app.selectbox(key="board").options) == 2  # level 1 and level 2
    assert app.selectbox(key="problem").value == L1[0]


def test_run_page_shows_the_runs_header(monkeypatch, results_dir):
    app = app_over(monkeypatch, results_dir, tab="Runs", run="run-kforge")
    runs = app.dataframe[0].value
    assert {"run-kforge", "run-direct"} <= set(runs["run_id"]) and "timer" in runs.columns
    assert app.metric[2].value == "NVIDIA H200"
    assert app.json[0].value and "run-kforge" in str(app.json[0].value)
