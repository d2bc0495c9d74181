"""The upstream KernelBench importer, on hand-written fixture files."""

from pathlib import Path

import pytest

from harness.records import metrics
from harness.errors import UserError
from harness.problems.importers import import_kernelbench, iter_eval_entries, main, problem_number
from harness.records.results import read_run
from leaderboard.data import load_frame
from leaderboard.tables import imported_board, leaderboard

FIXTURES = Path(__file__).parent / "fixtures"
EVAL = FIXTURES / "kernelbench_eval_results.json"
EVAL_SINGLE = FIXTURES / "kernelbench_eval_results_single.json"
BASELINE = FIXTURES / "baseline_time_torch.json"


def imported(tmp_path, eval_file=EVAL, **options):
    options = {"level": 1, "generator": "upstream-test", "baseline_path": BASELINE, "hardware": "NVIDIA L40S",
               "out_dir": tmp_path, **options}
    header, records = read_run(import_kernelbench(eval_file, **options))
    return header, {(r["problem_id"], r["attempt"]): r for r in records}


def test_imported_run_header_and_records_are_labelled_imported(tmp_path):
    header, records = imported(tmp_path)
    assert header["imported"] is True
    assert header["provenance"]["device"] == "NVIDIA L40S"
    assert all(r["imported"] is True and r["generator"] == "upstream-test" for r in records.values())


def test_problem_ids_come_from_baseline_file_names(tmp_path):
    _, records = imported(tmp_path)
    assert set(records) == {
        ("L1/1_Square_matrix_multiplication_", 0), ("L1/1_Square_matrix_multiplication_", 1),
        ("L1/2_Standard_matrix_multiplication_", 0), ("L1/3_Batched_matrix_multiplication", 0),
        ("L1/4_Matrix_vector_multiplication_", 0),
    }


def test_speedup_is_baseline_mean_over_runtime_for_correct_samples_only(tmp_path):
    _, records = imported(tmp_path)
    first = records[("L1/1_Square_matrix_multiplication_", 0)]
    assert first["speedup"] == pytest.approx(5.0 / 2.5) and first["eager_ms"] == 5.0
    assert records[("L1/1_Square_matrix_multiplication_", 1)]["speedup"] is None
    assert records[("L1/3_Batched_matrix_multiplication", 0)]["speedup"] == pytest.approx(1.0 / 0.5)


def test_ref_runtime_is_used_without_a_baseline_file(tmp_path):
    _, records = imported(tmp_path, baseline_path=None)
    assert records[("L1/3", 0)]["speedup"] == pytest.approx(0.75 / 0.5)
    assert records[("L1/1", 0)]["speedup"] is None  # no reference time known


def test_statuses_and_reasons_follow_upstream_metadata(tmp_path):
    _, records = imported(tmp_path)
    compile_failure = records[("L1/2_Standard_matrix_multiplication_", 0)]
    assert compile_failure["status"] == "compile_error" and compile_failure["compiled"] is False
    assert "identifier" in compile_failure["reason"]
    assert records[("L1/4_Matrix_vector_multiplication_", 0)]["status"] == "runtime_error"
    assert records[("L1/1_Square_matrix_multiplication_", 1)]["status"] == "incorrect"


def test_compile_baseline_file_fills_speedup_compile(tmp_path):
    _, records = imported(tmp_path, baseline_kind="compile")
    first = records[("L1/1_Square_matrix_multiplication_", 0)]
    assert first["speedup_compile"] == pytest.approx(2.0) and first["speedup"] is None


def test_microsecond_runtimes_are_converted(tmp_path):
    _, records = imported(tmp_path, time_unit="us")
    assert records[("L1/1_Square_matrix_multiplication_", 0)]["candidate_ms"] == pytest.approx(0.0025)


def test_single_entry_layout_is_read(tmp_path):
    _, records = imported(tmp_path, eval_file=EVAL_SINGLE)
    assert records[("L1/1_Square_matrix_multiplication_", 0)]["speedup"] == pytest.approx(1.25)
    assert records[("L1/3_Batched_matrix_multiplication", 0)]["correct"] is False


def test_sample_mapping_layout_is_read():
    results = {"5": {"0": {"compiled": True, "correctness": True}, "1": {"compiled": False, "correctness": False}}}
    assert [(key, sample) for key, sample, _ in iter_eval_entries(results)] == [("5", 0), ("5", 1)]


@pytest.mark.parametrize("key, number", [("12", 12), ("12_Gemm.py", 12), ("level1/7_X.py", 7), ("x", None)])
def test_problem_number_reads_ids_and_file_names(key, number):
    assert problem_number(key) == number


def test_imported_metrics_match_hand_computation(tmp_path):
    _, records = imported(tmp_path)
    summary = metrics.level_summary(records.values(), wins="point", attempts="best")  # no intervals upstream
    assert summary["problems"] == 4 and summary["correct"] == 2
    assert summary["compile_rate"] == pytest.approx(3 / 4)
    assert summary["fast_p"][1.5] == pytest.approx(2 / 4)  # speedups 2.0 and 2.0


def test_imported_runs_show_beside_but_are_never_ranked(tmp_path):
    imported(tmp_path)
    frame = load_frame(tmp_path).frame
    assert leaderboard(frame).empty
    assert list(imported_board(frame)["generator"]) == ["upstream-test"]


def test_wrong_level_names_the_available_sections(tmp_path):
    with pytest.raises(UserError, match="level3"):
        imported(tmp_path, level=3)


def test_not_an_eval_file_is_refused_with_a_clear_message(tmp_path):
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"a": {"b": 1}}')
    with pytest.raises(UserError, match="no entries"):
        imported(tmp_path, eval_file=bogus)


def test_command_line_writes_a_run_file_and_reports_errors(tmp_path, capsys):
    assert main(["kernelbench", str(EVAL), "--level", "1", "--generator", "cli", "--baseline", str(BASELINE),
                 "--out", str(tmp_path)]) == 0
    assert Path(capsys.readouterr().out.strip()).is_file()
    assert main(["kernelbench", str(tmp_path / "missing.json"), "--level", "1", "--generator", "cli"]) == 2
    assert "not found" in capsys.readouterr().out
