"""A process the worker leaves running (a candidate's native fork, inductor's compile pool) ends with
the worker's session, even when the worker itself exits cleanly: otherwise it would keep running
beside the timings of every later candidate."""

import os
import secrets
import time
from pathlib import Path

from harness.evaluate import EvalCache, evaluate
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
