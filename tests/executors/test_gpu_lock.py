"""The GPU lock (harness.judge.gpu_lock) between real processes: work on the GPU is shared, a timing
window is exclusive of everything else on that GPU, and a process that times inside its own shared
hold goes back to sharing afterwards. The lock is a file lock, so this runs without a GPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HOLDER = """
import json, sys, time
from harness.judge.gpu_lock import gpu_work, timing_window
mode, hold_s = sys.argv[1], float(sys.argv[2])
spans = {}
if mode == "work":
    with gpu_work("cuda", 0):
        spans["work"] = [time.time(), time.sleep(hold_s) or time.time()]
else:  # shared work, a timing window inside it, then shared work again
    with gpu_work("cuda", 0):
        with timing_window("cuda", 0):
            spans["timing"] = [time.time(), time.sleep(hold_s) or time.time()]
        spans["after"] = [time.time(), time.sleep(2 * hold_s) or time.time()]
print(json.dumps(spans))
"""


def _start(tmp_path, mode: str, hold_s: float) -> subprocess.Popen:
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", HOLDER, mode, str(hold_s)], env=env, stdout=subprocess.PIPE, text=True)


def _spans(process: subprocess.Popen) -> dict:
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0
    return json.loads(out)


def _overlap(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def test_work_on_one_gpu_is_shared(tmp_path):
    first, second = _start(tmp_path, "work", 2.0), _start(tmp_path, "work", 2.0)
    a, b = _spans(first)["work"], _spans(second)["work"]
    assert _overlap(a, b), "two processes could not work on the GPU side by side"


def test_a_timing_window_excludes_all_other_work_and_then_shares_again(tmp_path):
    before = _start(tmp_path, "work", 2.0)
    time.sleep(1.0)              # inside `before`'s work (its interpreter is up by now)
    timer = _start(tmp_path, "time", 1.5)
    time.sleep(1.0)
    during = _start(tmp_path, "work", 0.5)
    time.sleep(2.5)              # the timer is back to shared work by now, or soon
    after = _start(tmp_path, "work", 0.5)
    spans = _spans(timer)
    others = [_spans(p)["work"] for p in (before, during, after)]
    for other in others:
        assert not _overlap(spans["timing"], other), f"work {other} ran inside the timing window {spans['timing']}"
    assert spans["timing"][0] >= others[0][1], "the window opened before the other process's work ended"
    assert any(_overlap(spans["after"], other) for other in others[1:]), \
        "after its window the timer kept the GPU to itself instead of sharing it"


def test_on_the_cpu_nothing_is_locked(tmp_path, monkeypatch):
    from harness.judge import gpu_lock

    monkeypatch.setattr(gpu_lock.tempfile, "tempdir", str(tmp_path))
    with gpu_lock.gpu_work("cpu", 0), gpu_lock.timing_window("cpu", 0):
        assert not gpu_lock.holding("cpu", 0)
    assert list(tmp_path.iterdir()) == []
