"""The figure command: every figure type from result files, byte-identical on reruns."""

import json
from pathlib import Path

import pytest

from leaderboard import figures
from leaderboard_fixtures import build_results

BOARD = "kernelbench__nvidia-h200__fp32__full__eager"  # suite, device, precision, size, baseline
BOARD_FIGURES = ("fast_1", "fast_p", "speedup_distribution", "problem_heatmap", "failure_modes", "sol_fraction",
                 "tokens_speedup", "refinement", "tokens_correctness", "cost_speedup")
EXPECTED = [f"{kind}__{BOARD}" for kind in BOARD_FIGURES]
EXPECTED += ["megakernel_validator", "megakernel_search_trajectory", "megakernel_validator_throughput"]


@pytest.fixture(scope="module")
def generated(results_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("figures")
    return out, figures.generate(results_dir, out, log=lambda message: None)


def test_every_figure_type_is_written_as_png_and_pdf(generated):
    out, outcome = generated
    assert not outcome["skipped"]
    for name in EXPECTED:
        assert (out / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (out / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"


def test_same_inputs_give_byte_identical_files(generated, results_dir, tmp_path):
    out, _ = generated
    figures.generate(results_dir, tmp_path, log=lambda message: None)
    for path in sorted(out.iterdir()):
        assert (tmp_path / path.name).read_bytes() == path.read_bytes(), path.name


def test_missing_data_skips_figures_with_a_reason(tmp_path):
    results = build_results(tmp_path / "results", megakernel=False)
    (results / "megakernel").mkdir()
    (results / "megakernel" / "summary.json").write_text(json.dumps({"confusion": {"tp": 1, "tn": 1, "fp": 0, "fn": 0}}))
    messages = []
    outcome = figures.generate(results, tmp_path / "out", log=messages.append)
    skipped = dict(outcome["skipped"])
    assert set(skipped) == {"megakernel_search_trajectory", "megakernel_validator_throughput"}
    assert "trajectory" in skipped["megakernel_search_trajectory"]
    assert (tmp_path / "out" / "megakernel_validator.png").exists()
    assert "Skipped" in (tmp_path / "out" / "index.md").read_text()


def test_runs_without_transcripts_usage_or_timings_skip_those_figures(tmp_path):
    from harness.records.results import RunWriter
    from leaderboard_fixtures import header, record

    writer = RunWriter(tmp_path / "runs" / "20250101T000000Z-a_kernelbench_cpu.jsonl", header("reference", "run-cpu"))
    writer.append(record("L1/1_Op1", "reference", speedup=None))
    outcome = figures.generate(tmp_path, tmp_path / "out", log=lambda message: None)
    skipped = {name.split("__")[0] for name, _ in outcome["skipped"]}
    assert skipped == {"fast_1", "fast_p", "speedup_distribution", "problem_heatmap", "sol_fraction",
                       "tokens_speedup", "refinement", "tokens_correctness", "cost_speedup",
                       "megakernel_validator", "megakernel_search_trajectory", "megakernel_validator_throughput"}


def test_command_line_reports_bad_folders(tmp_path, capsys):
    assert figures.main(["--results", str(tmp_path / "absent"), "--out", str(tmp_path / "out")]) == 2
    assert "no such results folder" in capsys.readouterr().err


def test_figures_draw_the_numbers_the_app_shows(generated, results_dir, monkeypatch):
    """The fast_1 figure's table (written beside it) against the app's rendered rankings."""
    import pandas as pd
    from streamlit.testing.v1 import AppTest

    from leaderboard import display

    out, _ = generated
    drawn = pd.read_csv(out / f"fast_1__{BOARD}.csv")
    monkeypatch.setenv("CRUCIBLE_RESULTS", str(results_dir))
    app = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "leaderboard" / "app.py"),
                            default_timeout=120).run()
    compared = 0
    for index, level in enumerate((1, 2)):
        shown = app.table[index].value.set_index("generator")
        for row in drawn[(drawn["level"] == level) & (drawn["role"] == "ranked")].itertuples():
            assert shown.loc[row.generator, "fast_1"] == display.percent(row.fast_1)
            assert shown.loc[row.generator, "geomean speedup"] == display.times(row.geomean_speedup)
            assert shown.loc[row.generator, "rank"] == str(int(row.rank))
            compared += 1
    assert compared == 6


def test_titles_name_device_precision_size_and_baseline(results_dir):
    frame = figures.load_frame(results_dir).frame
    builders = figures.board_figures(frame, "compile")
    figure = builders["fast_p__kernelbench__nvidia-h200__fp32__full__compile"]()
    title = figure._suptitle.get_text()
    assert all(part in title for part in ("NVIDIA H200", "fp32", "size full", "against torch.compile")), title


def test_zero_cost_entries_skip_the_cost_figure(tmp_path):
    from harness.records.results import RunWriter
    from leaderboard_fixtures import L1, header, record

    writer = RunWriter(tmp_path / "runs" / "20250101T000000Z-a_kernelbench_free.jsonl", header("free", "run-free"))
    for problem in L1:
        writer.append(record(problem, "free", "local", speedup=1.5,
                             usage={"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.0}))
    outcome = figures.generate(tmp_path, tmp_path / "out", log=lambda message: None)
    reasons = {name.split("__")[0]: why for name, why in outcome["skipped"]}
    assert "$0" in reasons["cost_speedup"]
