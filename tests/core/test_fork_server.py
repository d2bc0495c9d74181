"""Workers forked from the fork server (harness.judge.forkserver) are fresh, separate workers: each
has its own environment, work directory and random state, every exit is reported with its cause,
a server that was reniced is replaced, and ``CRUCIBLE_FORK_SERVER=0`` spawns every worker."""

import json
import os
import secrets
import subprocess
from pathlib import Path

import pytest

from harness.judge import workers as judge_workers
from harness.judge.evaluate import EvalCache, evaluate
from harness.judge.forkserver import ForkedProcess
from harness.judge.workers import WorkerLimits, WorkerSession
from tests.core.test_verdicts import CASES, GOOD

LIMITS = WorkerLimits(memory_bytes=3 << 30, load_s=60, first_call_s=20, call_s=20)


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


@pytest.fixture
def server(monkeypatch):
    """A ready fork server for CPU workers under LIMITS; spares off, so every session forks its own."""
    monkeypatch.setenv("CRUCIBLE_FORK_SERVER", "1")
    monkeypatch.setenv("CRUCIBLE_SPARE_WORKER", "0")
    servers = judge_workers._FORK_SERVERS
    servers.close()
    for _ in range(2):   # spawned: a server starts at the second spawn under one environment
        with WorkerSession("cpu", LIMITS) as first:
            assert isinstance(first.process, subprocess.Popen)
    assert servers.server is not None and servers.server.poll_ready(120), "the fork server never came up"
    yield servers
    servers.close()


def test_a_worker_is_forked_from_the_server_and_answers(server):
    with WorkerSession("cpu", LIMITS) as session:
        assert isinstance(session.process, ForkedProcess)
        session.wait_ready(60)
        assert _parent(session.process.pid) == server.server.process.pid
        assert os.getpgid(session.process.pid) == session.process.pid, "a worker leads its own process group"
    assert session.process.poll() == 0, "a worker that said bye exits with 0"


@pytest.mark.parametrize("case", ["os_exit", "segfault", "exception"])
def test_a_forked_worker_s_failure_is_named_as_a_spawned_one_s(case, server, scale_relu, fast_opts):
    source, status, text = CASES[case]
    record = evaluate(scale_relu, source, fast_opts, EvalCache())
    assert record["phases_s"]["candidate"].get("spawn", 1.0) < 0.5, "the worker was not forked"
    assert record["status"] == status and text in record["reason"], record["reason"]


def test_each_forked_worker_has_its_own_environment_and_random_state(server, scale_relu, fast_opts):
    note = Path("/dev/shm") / f"crucible-forks-{secrets.token_hex(6)}"
    source = GOOD + f'''
import json, os, random, sys, tempfile
with open({str(note)!r}, "a") as handle:
    handle.write(json.dumps({{"home": os.environ["HOME"], "tmp": tempfile.gettempdir(), "cwd": os.getcwd(),
                             "random": random.random(), "pid": os.getpid(), "argv": sys.argv}}) + "\\n")
'''
    try:
        for _ in range(2):
            assert evaluate(scale_relu, source, fast_opts, EvalCache())["status"] == "ok"
        first, second = (json.loads(line) for line in note.read_text().splitlines())
    finally:
        note.unlink(missing_ok=True)
    assert first["pid"] != second["pid"]
    assert first["home"] == first["cwd"] == first["tmp"] != second["home"] == second["cwd"] == second["tmp"]
    assert "forkserver" not in first["home"], "a worker kept the server's own directories"
    assert first["random"] != second["random"], "two forks share the server's random state"
    for seen in (first, second):   # as a spawned worker's: `python -m harness.judge.worker FD`
        assert seen["argv"][0].endswith("harness/judge/worker/__main__.py") and seen["argv"][1].isdigit()


def test_a_reniced_server_is_replaced_before_it_forks_again(server):
    """A candidate may renice the server (same user; the sandbox refuses signals and ptrace, not
    setpriority), and every worker forked after would inherit it: the judge starts a new server."""
    old = server.server
    os.setpriority(os.PRIO_PROCESS, old.process.pid, os.getpriority(os.PRIO_PROCESS, old.process.pid) + 3)
    with WorkerSession("cpu", LIMITS) as session:
        assert isinstance(session.process, subprocess.Popen), "a worker was forked from a tampered server"
        assert server.server is not None and server.server is not old
    assert old.process.poll() is not None, "the tampered server was left running"
    assert server.server.poll_ready(120)
    with WorkerSession("cpu", LIMITS) as session:
        assert isinstance(session.process, ForkedProcess)
        niceness = os.getpriority(os.PRIO_PROCESS, session.process.pid)
    assert niceness == os.getpriority(os.PRIO_PROCESS, 0)


def test_a_one_off_environment_starts_no_server(server):
    """A worker environment seen once (a test's own limits) is spawned, and no server is started
    for it; the server of the usual environment is kept."""
    usual = server.server
    with WorkerSession("cpu", WorkerLimits(memory_bytes=2 << 30)) as session:
        assert isinstance(session.process, subprocess.Popen)
    assert list(server.servers.values()) == [usual]


def test_the_switch_turns_forking_off(server, monkeypatch):
    monkeypatch.setenv("CRUCIBLE_FORK_SERVER", "0")
    with WorkerSession("cpu", LIMITS) as session:
        assert isinstance(session.process, subprocess.Popen)


def test_a_forked_judge_does_not_use_its_parent_s_server(server):
    """A judge process forked from another (a multiprocessing pool, say) inherits the parent's
    server channels; it must start its own rather than talk over the parent's, and leave the
    parent's server running."""
    parent_server = server.server
    pid = os.fork()
    if pid == 0:   # the forked judge: leaves with os._exit whatever happens
        code = 3
        try:
            with WorkerSession("cpu", LIMITS) as session:
                session.wait_ready(60)
                code = 0 if isinstance(session.process, subprocess.Popen) else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the forked judge used its parent's fork server"
    assert parent_server.intact() and server.server is parent_server
    with WorkerSession("cpu", LIMITS) as session:
        assert isinstance(session.process, ForkedProcess)
