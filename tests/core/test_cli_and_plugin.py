"""The public entry points: the eval CLI's JSON contract and exit codes, the pytest plugin with and without xdist."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBLEM = ROOT / "tests" / "fixtures" / "problems" / "1_Scale_ReLU.py"
pytest_plugins = ["pytester"]


def run_cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_eval_json_last_line_is_the_verdict_and_exit_is_zero_even_when_incorrect(tmp_path):
    wrong = tmp_path / "wrong.py"
    wrong.write_text("import torch\nclass ModelNew(torch.nn.Module):\n    def __init__(self, dim):\n        super().__init__()\n"
                     "    def forward(self, x):\n        return x\n")
    done = run_cli("eval", "--reference", str(PROBLEM), "--candidate", str(wrong), "--json", "--runs-dir", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout.strip().splitlines()[-1])
    for key in ("status", "correct", "speedup", "speedup_compile", "sol_fraction", "flags", "reason"):
        assert key in verdict
    assert verdict["status"] == "incorrect" and verdict["correct"] is False and verdict["speedup"] is None
    assert len(list((tmp_path / "runs").glob("*.jsonl"))) == 1


def test_eval_measures_speedup_for_a_correct_candidate(tmp_path):
    good = tmp_path / "good.py"
    good.write_text(PROBLEM.read_text() + "\nModelNew = Model\n")
    done = run_cli("eval", "--reference", str(PROBLEM), "--candidate", str(good), "--json", "--no-record")
    verdict = json.loads(done.stdout.strip().splitlines()[-1])
    assert verdict["status"] == "ok" and verdict["speedup"] > 0 and verdict["sol_fraction"] > 0


@pytest.mark.parametrize("args,message", [
    (("--device", "tpu"), "--device 'tpu' is not valid"),
    (("--candidate", "/nonexistent.py"), "no such file"),
])
def test_usage_errors_exit_2_with_a_message(args, message, tmp_path):
    base = {"--reference": str(PROBLEM), "--candidate": str(PROBLEM)}
    base.update(dict(zip(args[::2], args[1::2])))
    flat = [item for pair in base.items() for item in pair]
    done = run_cli("eval", *flat, "--no-record")
    assert done.returncode == 2 and message in done.stderr


def test_cuda_request_without_gpu_says_what_to_do():
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is visible")
    done = run_cli("eval", "--reference", str(PROBLEM), "--candidate", str(PROBLEM), "--device", "cuda", "--no-record")
    assert done.returncode == 2 and "Use --device cpu" in done.stderr


def _suite_args(tmp_path, *extra):
    return [str(ROOT / "suites" / "kernelbench" / "test_kernelbench.py"), "--level", "1", "--runs-dir",
            str(tmp_path / "runs"), "--kernelbench-root", str(ROOT / "tests" / "fixtures" / "problems_root"), *extra]


def test_plugin_runs_one_test_per_problem_and_prints_a_level_summary(pytester, tmp_path):
    result = pytester.runpytest_subprocess(*_suite_args(tmp_path), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*Crucible summary*", "L1: 2/2 correct*", "run file:*"])
    files = list((tmp_path / "runs").glob("*_kernelbench_reference.jsonl"))
    assert len(files) == 1


def test_plugin_under_xdist_writes_every_record_to_one_run_file(pytester, tmp_path):
    pytest.importorskip("xdist")
    result = pytester.runpytest_subprocess(*_suite_args(tmp_path, "-n", "2"), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    files = list((tmp_path / "runs").glob("*.jsonl"))
    assert len(files) == 1
    lines = [json.loads(line) for line in files[0].read_text().splitlines()]
    assert [line["type"] for line in lines].count("header") == 1
    assert sorted(line["problem_id"] for line in lines if line["type"] == "record") == ["L1/1_Scale_ReLU", "L1/2_Row_Softmax"]


def test_plugin_rejects_a_bad_option_value_quoting_it(pytester, tmp_path):
    result = pytester.runpytest_subprocess(*_suite_args(tmp_path, "--size", "huge"))
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--size 'huge' is not valid*"])
