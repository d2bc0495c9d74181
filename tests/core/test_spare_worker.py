"""Spare workers: a worker started ahead is adopted by the next session, never shared between two
candidates, and the verdicts are the same as with a worker started on demand.

Spares are on by default on both devices; these tests also force them on (CRUCIBLE_SPARE_WORKER=1).
"""

import os

import pytest

from tests.core.test_verdicts import CASES, GOOD


@pytest.fixture
def spares_on(monkeypatch):
    from harness.judge.workers import drain_spare_workers

    monkeypatch.setenv("CRUCIBLE_SPARE_WORKER", "1")
    drain_spare_workers()  # spares are on by default: an earlier test in this process may have left one
    yield
    drain_spare_workers()


def test_default_is_on_for_both_devices_and_0_turns_it_off(monkeypatch):
    from harness.judge.workers import spare_workers_enabled

    monkeypatch.delenv("CRUCIBLE_SPARE_WORKER", raising=False)
    assert spare_workers_enabled("cuda") and spare_workers_enabled("cpu")
    monkeypatch.setenv("CRUCIBLE_SPARE_WORKER", "0")
    assert not spare_workers_enabled("cuda")
    monkeypatch.setenv("CRUCIBLE_SPARE_WORKER", "maybe")
    with pytest.raises(Exception, match="CRUCIBLE_SPARE_WORKER"):
        spare_workers_enabled("cuda")


def test_each_session_gets_its_own_process_and_adopts_the_spare(spares_on):
    from harness.judge import workers as judge

    pids, adopted = [], []
    for _ in range(3):
        with judge.WorkerSession("cpu", judge.WorkerLimits()) as session:
            session.wait_ready()
            pids.append(session.process.pid)
            adopted.append(session.adopted_spare)
            assert session.workdir.is_dir()
        assert session.process.poll() is not None, "a closed session's worker must have exited"
    assert len(set(pids)) == 3
    assert adopted == [False, True, True]
    spare = judge._SPARES.session
    assert spare is not None and spare.process.poll() is None and spare.process.pid not in pids
    judge.drain_spare_workers()
    assert spare.process.poll() is not None and not spare.workdir.exists()


def test_no_spare_lives_beside_untrusted_code(spares_on):
    """An untrusted candidate could tamper with a process that will time a baseline, so a spare is
    started only when a session has ended, and an untrusted session ends every other spare."""
    from harness.judge import workers as judge

    with judge.WorkerSession("cpu", judge.WorkerLimits(), trusted=True) as baseline:
        baseline.wait_ready()
        assert judge._SPARES.session is None, "spares start when a session closes, not beside it"
    beside_trusted = judge._SPARES.session
    assert beside_trusted is not None and beside_trusted.process.poll() is None
    with judge.WorkerSession("cpu", judge.WorkerLimits()) as candidate:
        assert candidate.adopted_spare and candidate.process.pid == beside_trusted.process.pid
        assert judge._SPARES.session is None, "a spare was alive while untrusted code ran"
    assert candidate.process.poll() is not None
    after = judge._SPARES.session
    assert after is not None and after.process.pid != candidate.process.pid


def test_a_spare_started_under_other_settings_is_not_adopted(spares_on, monkeypatch):
    from harness.judge import workers as judge

    with judge.WorkerSession("cpu", judge.WorkerLimits()):
        pass
    stale = judge._SPARES.session
    monkeypatch.setenv("CRUCIBLE_CPU_THREADS", "2")  # the worker's environment changes
    with judge.WorkerSession("cpu", judge.WorkerLimits()) as session:
        session.wait_ready()
        assert not session.adopted_spare
        assert session.process.pid != stale.process.pid
    assert stale.process.poll() is not None
    with judge.WorkerSession("cpu", judge.WorkerLimits(memory_bytes=2 << 30)) as session:
        assert not session.adopted_spare  # another memory limit: another key


def test_a_dead_spare_is_replaced(spares_on):
    from harness.judge import workers as judge

    with judge.WorkerSession("cpu", judge.WorkerLimits()):
        pass
    judge._SPARES.session.kill()
    with judge.WorkerSession("cpu", judge.WorkerLimits()) as session:
        reply = session.request({"op": "ping"}, 60, "load")
        assert not session.adopted_spare
        assert reply.get("ok") is False and "unknown op" in reply["message"]


@pytest.mark.parametrize("case", ["os_exit", "segfault", "exception", "wrong_values", "input_mutation"])
def test_verdicts_are_the_same_with_spares(case, spares_on, scale_relu, fast_opts):
    """A failing candidate in an adopted worker, then an honest one in the next: same verdicts."""
    from harness.judge.evaluate import EvalCache, evaluate

    cache = EvalCache()
    first = evaluate(scale_relu, GOOD, fast_opts, cache)
    source, status, reason_part = CASES[case]
    failing = evaluate(scale_relu, source, fast_opts, cache)
    after = evaluate(scale_relu, GOOD, fast_opts, cache)
    assert first["status"] == "ok"
    assert failing["status"] == status and reason_part in failing["reason"] + str(failing.get("checks", "")) \
        + failing.get("traceback", "")
    assert after["status"] == "ok" and after["correct"] is True


def test_the_spare_leaves_with_the_judge(tmp_path):
    """A judge that exits (here: a child Python) takes its spare with it: no orphan keeps running."""
    import subprocess
    import sys
    import time

    script = (
        "import os\n"
        "os.environ['CRUCIBLE_SPARE_WORKER'] = '1'\n"
        "from harness.judge import workers as judge\n"
        "with judge.WorkerSession('cpu', judge.WorkerLimits()):\n"
        "    pass\n"
        "judge._SPARES.settle()\n"
        "print(judge._SPARES.session.process.pid, flush=True)\n"
        "os._exit(0)\n"  # no atexit: the spare must still go, when its channel closes
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=root, timeout=120,
                         env={**os.environ, "PYTHONPATH": root})
    pid = int(out.stdout.split()[-1])
    deadline = time.time() + 30
    while time.time() < deadline and _alive(pid):
        time.sleep(0.2)
    assert not _alive(pid), "the spare outlived its judge"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _load(session, source):
    return session.request({"op": "load", "source": source, "init_args": [], "init_seed": 0, "state_dict": {},
                            "device": "cpu", "precision": "fp32", "flags": {"allow_tf32": False}, "gpu_index": None}, 120, "load")


def test_a_worker_exits_at_once_whatever_its_candidate_left_for_interpreter_shutdown():
    """torch.compile's compile workers kept every compile baseline's worker alive past the judge's
    3 s wait after ``bye`` (then it was killed); the worker now leaves without the interpreter's
    shutdown, so a candidate's atexit handler cannot hold it either."""
    import time

    from harness.judge import workers as judge

    slow_exit = "import atexit, time\natexit.register(time.sleep, 30)\n"
    with judge.WorkerSession("cpu", judge.WorkerLimits()) as session:
        assert _load(session, slow_exit).get("kind") == "compile_error"  # no ModelNew; the handler stays
        process = session.process
        started = time.perf_counter()
    assert time.perf_counter() - started < 2.5
    assert process.returncode == 0, "the worker was killed instead of leaving after bye"


def test_a_session_that_asks_for_several_spares_starts_them_together_and_the_next_sessions_adopt_them(spares_on):
    """A session that closes starts the workers the next evaluation needs at once (its candidate's
    and its baselines'); the sessions after it adopt them and start none until the pool is empty."""
    from harness.judge import workers as judge

    with judge.WorkerSession("cpu", judge.WorkerLimits(), trusted=True, spares_ahead=3):
        pass
    pool = [s.process.pid for s in judge._SPARES.sessions]
    assert len(set(pool)) == 3 and all(s.process.poll() is None for s in judge._SPARES.sessions)
    adopted, left = [], []
    for _ in range(3):
        with judge.WorkerSession("cpu", judge.WorkerLimits(), trusted=True) as session:
            adopted.append(session.process.pid)
            left.append(len(judge._SPARES.sessions))
    assert adopted == pool, "spares are adopted oldest first"
    assert left == [2, 1, 0], "a session starts spares only when it closes, and only into an empty pool"
    assert judge._SPARES.session.process.pid not in pool


def test_an_untrusted_session_adopts_one_spare_and_ends_the_others_first(spares_on):
    from harness.judge import workers as judge

    with judge.WorkerSession("cpu", judge.WorkerLimits(), trusted=True, spares_ahead=3):
        pass
    first, *others = list(judge._SPARES.sessions)
    with judge.WorkerSession("cpu", judge.WorkerLimits()) as candidate:
        assert candidate.process.pid == first.process.pid
        assert judge._SPARES.sessions == [], "a spare was alive while untrusted code ran"
        assert all(o.process.poll() is not None for o in others)
    assert len(judge._SPARES.sessions) == 1  # one, started once the candidate's worker was dead
