"""Choosing an executor: the local loop, a clear message without Ray, Ray never imported unasked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from harness.executors.local import run_sweep

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS_ROOT = ROOT / "tests" / "fixtures" / "problems_root"
WITHOUT_RAY = "import sys; sys.modules['ray'] = None; from harness.cli import main; sys.exit(main(sys.argv[1:]))"


def _cli(code: str, *args: str, cwd=ROOT):
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_executor_ray_without_ray_says_how_to_install_it_and_writes_nothing(tmp_path):
    done = _cli(WITHOUT_RAY, "run", "--level", "1", "--kernelbench-root", str(PROBLEMS_ROOT), "--no-timing",
                "--runs-dir", str(tmp_path / "runs"), "--executor", "ray")
    assert done.returncode == 2
    assert "pip install crucible-kernels[ray]" in done.stderr
    assert not (tmp_path / "runs").exists()


def test_an_unknown_executor_is_refused_quoting_it(tmp_path):
    done = _cli(WITHOUT_RAY, "run", "--executor", "dask", "--runs-dir", str(tmp_path))
    assert done.returncode == 2
    assert "--executor 'dask' is not valid; choose one of: local, ray" in done.stderr


def test_the_harness_and_its_plugin_import_without_importing_ray():
    code = ("import sys, harness, harness.cli, harness.executors.runner, harness.pytest_plugin, harness.executors, "
            "harness.executors.options; sys.exit('ray' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=120).returncode == 0


class _Runner:
    """A runner double: which problems it ran, and one record each."""

    def __init__(self, done: set[str]):
        self.done, self.ran = done, []

    def already_done(self, problem) -> bool:
        return problem.id in self.done

    def run_problem(self, problem) -> list[dict]:
        self.ran.append(problem.id)
        return [{"problem_id": problem.id}]


class _Progress(list):
    def skip(self, problem_id):
        self.append(("skip", problem_id))

    def done(self, problem_id, records):
        self.append(("done", problem_id, len(records)))


def test_the_local_executor_runs_each_unrecorded_problem_in_order_and_reports_progress():
    runner, progress = _Runner({"b"}), _Progress()
    records = run_sweep(runner, [SimpleNamespace(id=name) for name in "abc"], progress)
    assert runner.ran == ["a", "c"]
    assert records == [{"problem_id": "a"}, {"problem_id": "c"}]
    assert progress == [("done", "a", 1), ("skip", "b"), ("done", "c", 1)]


def test_the_plugin_refuses_executor_ray_under_xdist(tmp_path):
    suite = ROOT / "suites" / "kernelbench" / "test_kernelbench.py"
    done = subprocess.run([sys.executable, "-m", "pytest", str(suite), "--kernelbench-root", str(PROBLEMS_ROOT),
                           "--runs-dir", str(tmp_path), "--executor", "ray", "-n", "2", "-p", "no:cacheprovider"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 4
    assert "leave out pytest-xdist's -n" in done.stderr


def test_a_cluster_without_the_slots_a_task_needs_is_refused_instead_of_waiting_forever():
    import pytest

    from harness.errors import UserError
    from harness.executors.ray import check_capacity

    check_capacity({"CPU": 2.0, "GPU": 1.0}, {"num_gpus": 1, "num_cpus": 1}, "head:6379")
    with pytest.raises(UserError, match=r"the Ray cluster at head:6379 has 0 GPU slot\(s\), and each problem's task needs 1"):
        check_capacity({"CPU": 8.0}, {"num_gpus": 1, "num_cpus": 1}, "head:6379")
