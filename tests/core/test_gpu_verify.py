"""bench/gpu_verify.py, the one GPU verification command: harmless where there is no GPU, and its
stage list is well formed (the stages themselves run on a GPU machine)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_without_cuda_it_says_so_runs_nothing_and_exits_zero(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: this pins the behaviour without one")
    out = tmp_path / "verify"
    done = subprocess.run([sys.executable, "bench/gpu_verify.py", "--out", str(out), "--budget-s", "5"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    assert "no CUDA GPU is visible" in done.stdout and "nothing was run" in done.stdout
    assert not out.exists()


def test_every_stage_names_a_script_or_module_that_exists():
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import gpu_verify
    finally:
        sys.path.pop(0)
    names = [stage.name for stage in gpu_verify.STAGES]
    assert len(names) == len(set(names))
    for stage in gpu_verify.STAGES:
        target = stage.command[1]
        assert target == "-m" or (ROOT / target).is_file(), f"{stage.name}: {target} is missing"
        assert stage.min_s <= stage.limit_s


def test_a_sweep_stopped_at_its_limit_is_unfinished_and_runs_again(tmp_path):
    """bench/speed_sweep.py exits 3 when it stops at its time limit; that stage is not finished, so
    the next call (same --out) runs it again and the sweep resumes where it stopped."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import gpu_verify
        import speed_sweep
    finally:
        sys.path.pop(0)
    assert speed_sweep.UNFINISHED == gpu_verify.UNFINISHED
    stopped = gpu_verify._run([sys.executable, "-c", f"raise SystemExit({speed_sweep.UNFINISHED})"], tmp_path / "a.log", 60)
    failed = gpu_verify._run([sys.executable, "-c", "raise SystemExit(1)"], tmp_path / "b.log", 60)
    done = gpu_verify._run([sys.executable, "-c", "pass"], tmp_path / "c.log", 60)
    assert (stopped["status"], failed["status"], done["status"]) == ("unfinished", "failed", "passed")
    assert stopped["status"] not in gpu_verify.FINISHED and failed["status"] in gpu_verify.FINISHED
