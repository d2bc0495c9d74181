"""A process the worker leaves running (a candidate's native fork, inductor's compile pool) ends with
the worker's session, even when the worker itself exits cleanly: otherwise it would keep running
beside the timings of every later candidate."""

import os
import secrets
import time
from pathlib import Path

import pytest

from harness.judge.evaluate import EvalCache, evaluate
from tests.core.test_verdicts import GOOD


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped by its parent) has ended too.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(")")[-1].split()[0] != "Z"


def test_a_forked_child_does_not_outlive_the_worker(scale_relu, fast_opts):
    note = Path("/dev/shm") / f"crucible-fork-test-{secrets.token_hex(6)}"
    source = GOOD + f'''
import ctypes

_libc = ctypes.CDLL(None)
_pid = _libc.fork()   # native fork: the audit hook refuses os.fork, not a libc call
if _pid == 0:
    while True:
        _libc.sleep(1)
with open({str(note)!r}, "w") as handle:
    handle.write(str(_pid))
'''
    try:
        record = evaluate(scale_relu, source, fast_opts, EvalCache())
        assert record["status"] == "ok", record.get("reason")
        pid = int(note.read_text())
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(pid), f"the candidate's forked process {pid} outlived its worker"
    finally:
        note.unlink(missing_ok=True)


JUDGE = '''
import sys
from harness.judge.evaluate import EvalCache, EvalOptions, evaluate
from harness.judge.workers import WorkerLimits
from harness.problems.problem import load_problem

problem = load_problem(sys.argv[1], size="small", level=1)
opts = EvalOptions(timing=False, trials=3, limits=WorkerLimits(memory_bytes=3 << 30, load_s=120, first_call_s=20, call_s=20))
if sys.argv[3] == "forked":   # the worker is forked from the fork server, not started by the judge
    import os
    from harness.judge.workers import _FORK_SERVERS, WorkerSession

    os.environ.update(CRUCIBLE_SPARE_WORKER="0", CRUCIBLE_FORK_SERVER="1")
    for _ in range(2):   # a server starts at the second spawn under one environment
        with WorkerSession("cpu", opts.limits):
            pass
    assert _FORK_SERVERS.server.poll_ready(120)
evaluate(problem, open(sys.argv[2]).read(), opts, EvalCache())
'''


@pytest.mark.parametrize("start", ["spawned", "forked"])
def test_a_busy_worker_ends_soon_after_its_judge_is_killed(tmp_path, start):
    """A judge killed from outside (a time limit's SIGKILL) cannot close its workers; one busy in a
    long request would not read the closed channel and would keep loading the machine (seen on an H100,
    beside the next run's timings). The worker's watcher ends it within about a second; a forked
    worker's watcher watches the fork server, which ends with the judge's channel."""
    import signal
    import subprocess
    import sys

    from tests.core.conftest import FIXTURES

    note = Path("/dev/shm") / f"crucible-judge-test-{secrets.token_hex(6)}"
    candidate = tmp_path / "candidate.py"
    candidate.write_text(GOOD + f'''
import ctypes
import os

with open({str(note)!r}, "w") as handle:
    handle.write(f"{{os.getpid()}} {{os.getppid()}}")
ctypes.CDLL(None).sleep(120)   # a long load: the worker reads no message until it ends
''')
    judge = subprocess.Popen([sys.executable, "-c", JUDGE, str(FIXTURES / "problems" / "1_Scale_ReLU.py"), str(candidate),
                              start],
                             cwd=Path(__file__).resolve().parents[2])
    worker = None
    try:
        deadline = time.monotonic() + 90
        while not note.exists() and judge.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert note.exists(), "the candidate never started loading"
        time.sleep(0.2)
        worker, parent = map(int, note.read_text().split())
        assert _alive(worker)
        assert (parent == judge.pid) == (start == "spawned"), f"the worker's parent is {parent}, the judge {judge.pid}"
        judge.send_signal(signal.SIGKILL)
        judge.wait(10)
        deadline = time.monotonic() + 10
        while (_alive(worker) or _alive(parent)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(worker), f"worker {worker} outlived its killed judge"
        assert not _alive(parent), f"the fork server {parent} outlived its killed judge"
    finally:
        judge.kill()
        note.unlink(missing_ok=True)
        if worker and _alive(worker):
            os.kill(worker, 9)   # the failure left it running
