"""Workers forked from a process that has already imported torch and Triton.

Starting a worker (`python -m harness.judge.worker`) is mostly importing torch and Triton: about
1.2 CPU-seconds on a small CPU machine, twice per problem (the candidate's worker and the eager
baseline's), which was most of a small CPU sweep's work and every evaluation's ``ready`` wait. A
fork server does those imports once per judge and per worker environment, then forks each worker
from that state in tens of milliseconds.

Every worker is still a fresh process: the server never runs candidate code and never takes a
request from a worker; it imports the harness's worker modules, torch and Triton, and does nothing
else. Nothing that depends on the particular worker is decided before the fork: the child takes
its own session, work directory, log, per-worker variables (``HOME``, ``TMPDIR``, the compile
caches) and a fresh ``random`` state, and only then runs the worker's ``main`` exactly as a
spawned worker does (memory limit, CUDA context, guards, sandbox). CUDA is never initialised in the
server, so a forked CUDA worker creates its own context.

A worker is the server's child, not the judge's, so the server reports each child's exit status
to the judge (``ForkedProcess`` stands in for ``subprocess.Popen``). A worker's watcher
(harness.judge.worker.main._end_with_the_judge) watches the server; the server ends when the
judge's end of its channel closes, so a judge killed from outside still takes every worker with
it.

A candidate's sandbox refuses it signals and ptrace of the server, as of the judge. What it can
still do to a process of the same user is renice it or change its CPU affinity, which forked
children would inherit; the judge compares the server's niceness, affinity and run state with
what they were at its start before every fork and replaces a server that changed
(``ForkServer.intact``).

``CRUCIBLE_FORK_SERVER=0`` starts every worker with ``subprocess.Popen`` instead (``1`` or ``auto``,
the default: forked where the platform has ``fork``).
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

_MESSAGE_BYTES = 1 << 16
UNKNOWN_EXIT = 255      # the exit status of a worker whose server died before reporting it
PRELOAD = ("torch", "torch.multiprocessing", "triton", "triton.language", "harness.judge.worker.protocol",
           "harness.judge.worker.handlers", "harness.judge.worker.guards", "harness.judge.worker.hold",
           "harness.judge.worker.main")


class ForkServerError(Exception):
    """The fork server could not start a worker; the caller spawns one the usual way."""


def fork_server_enabled() -> bool:
    from harness.options import choice

    value = choice("CRUCIBLE_FORK_SERVER", ("auto", "0", "1"))(os.environ.get("CRUCIBLE_FORK_SERVER", "auto"))
    return value != "0" and hasattr(os, "fork") and sys.platform.startswith("linux")


class ForkedProcess:
    """The parts of ``subprocess.Popen`` the judge uses, for a worker forked by a ForkServer."""

    def __init__(self, server: ForkServer, pid: int):
        self.server = server
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.server.exit_status(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(f"forked worker {self.pid}", timeout)
            self.server.pump(0.05 if left is None else min(0.05, left))
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class ForkServer:
    """The judge's side: start the server (in the background), fork workers from it, read their exits."""

    def __init__(self, env: dict, workdir: Path):
        self.workdir = workdir
        self.log_path = workdir.parent / f"{workdir.name}.log"
        judge_end, server_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "harness.judge.forkserver", str(server_end.fileno())],
                pass_fds=(server_end.fileno(),), cwd=workdir, env=env, stdin=subprocess.DEVNULL,
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        server_end.close()
        self.sock = judge_end
        self.ready = False
        self.exits: dict[int, int] = {}
        self._forked: dict | None = None
        self._baseline: tuple | None = None     # (niceness, affinity) once the server is up

    def poll_ready(self, timeout_s: float = 0.0) -> bool:
        """Whether the server has finished its imports (reads its start-up message if it has)."""
        deadline = time.monotonic() + timeout_s
        while not self.ready and self.alive():
            self.pump(max(0.0, deadline - time.monotonic()))
            if time.monotonic() >= deadline:
                break
        return self.ready

    def alive(self) -> bool:
        return self.process.poll() is None and self.sock.fileno() >= 0

    def intact(self) -> bool:
        """Alive, not stopped, and at the niceness and CPU affinity it started with."""
        if not self.alive() or self._baseline is None:
            return False
        try:
            state = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            now = (os.getpriority(os.PRIO_PROCESS, self.process.pid), os.sched_getaffinity(self.process.pid))
        except (OSError, IndexError):
            return False
        return state not in ("T", "t") and now == self._baseline

    def fork(self, channel_fd: int, workdir: Path, log_path: Path, env: dict) -> ForkedProcess:
        """A new worker on ``channel_fd`` (its end of the judge's socket pair)."""
        if not (self.ready and self.intact()):
            raise ForkServerError("the fork server is not ready or was tampered with")
        request = {"op": "fork", "cwd": str(workdir), "log": str(log_path), "env": env}
        try:
            socket.send_fds(self.sock, [json.dumps(request).encode()], [channel_fd])
        except OSError as error:
            raise ForkServerError(f"the fork server's channel failed: {error}") from None
        deadline = time.monotonic() + 10.0
        while self._forked is None:
            if time.monotonic() > deadline or not self.alive():
                raise ForkServerError("the fork server did not fork")
            self.pump(0.05)
        reply, self._forked = self._forked, None
        if "pid" not in reply:
            raise ForkServerError(f"the fork server could not fork: {reply.get('error')}")
        return ForkedProcess(self, int(reply["pid"]))

    def exit_status(self, pid: int) -> int | None:
        self.pump(0.0)
        if pid in self.exits:
            return self.exits[pid]
        if not self.alive() and not Path(f"/proc/{pid}").exists():
            return UNKNOWN_EXIT
        return None

    def pump(self, timeout_s: float) -> None:
        """Read every message the server has sent, waiting up to ``timeout_s`` for the first."""
        if self.sock.fileno() < 0:
            time.sleep(timeout_s)   # nothing more will come: a caller waiting on /proc is not spun
            return
        wait = timeout_s
        while self.sock.fileno() >= 0:
            try:
                readable, _, _ = select.select([self.sock], [], [], wait)
            except (OSError, ValueError):
                return
            if not readable:
                return
            try:
                data = self.sock.recv(_MESSAGE_BYTES)
            except OSError:
                data = b""
            if not data:
                self.sock.close()
                return
            self._take(json.loads(data))
            wait = 0.0

    def _take(self, message: dict) -> None:
        if message.get("ready"):
            self.ready = True
            self._baseline = (os.getpriority(os.PRIO_PROCESS, self.process.pid),
                              os.sched_getaffinity(self.process.pid))
        elif "exit" in message:
            self.exits[int(message["exit"])] = int(message["code"])
        elif message.get("forked"):
            self._forked = message

    def close(self) -> None:
        self.sock.close()   # the server ends at its channel's end; its workers' watchers follow
        try:
            self.process.wait(timeout=3.0)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.process.wait()
        try:
            self.log_path.unlink()
        except OSError:
            pass


# -- the server process -------------------------------------------------------------------------

def serve(fd: int) -> int:
    """The server's loop: imports first, then forks on request and reports every child's exit."""
    import importlib

    sock = socket.socket(fileno=fd)
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass    # Triton may be absent; the worker says so itself
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_write)
    sock.send(json.dumps({"ready": True}).encode())
    while True:
        readable, _, _ = select.select([sock, wake_read], [], [])
        if wake_read in readable:
            os.read(wake_read, 4096)
        if not _report_exits(sock):
            return 0
        if sock in readable:
            try:
                data, fds, _, _ = socket.recv_fds(sock, _MESSAGE_BYTES, 1)
            except OSError:
                return 0
            if not data:
                return 0        # the judge is gone
            _fork_one(sock, json.loads(data), fds, (wake_read, wake_write))


def _report_exits(sock: socket.socket) -> bool:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return True
        if pid == 0:
            return True
        try:
            sock.send(json.dumps({"exit": pid, "code": os.waitstatus_to_exitcode(status)}).encode())
        except OSError:
            return False


def _fork_one(sock: socket.socket, request: dict, fds: list[int], wake: tuple[int, int]) -> None:
    if len(fds) != 1 or request.get("op") != "fork":
        for extra in fds:
            os.close(extra)
        sock.send(json.dumps({"forked": True, "error": "a fork request carries one channel"}).encode())
        return
    try:
        pid = os.fork()
    except OSError as error:
        os.close(fds[0])
        sock.send(json.dumps({"forked": True, "error": str(error)}).encode())
        return
    if pid == 0:
        _become_worker(sock, request, fds[0], wake)     # never returns
    os.close(fds[0])
    sock.send(json.dumps({"forked": True, "pid": pid}).encode())


def _become_worker(sock: socket.socket, request: dict, channel_fd: int, wake: tuple[int, int]) -> None:
    """In the child: shed the server's state, take the worker's own, run the worker's main."""
    code = 1
    try:
        os.setsid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for own in wake:
            os.close(own)
        sock.close()
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.close(null)
        os.chdir(request["cwd"])
        os.environ.update(request["env"])
        os.environ["CRUCIBLE_JUDGE_PID"] = str(os.getppid())   # the worker's watcher watches this server
        import random
        import tempfile

        tempfile.tempdir = None     # TMPDIR is the worker's own now
        random.seed()               # not the server's state, shared by every fork
        from harness.judge.worker import main as worker_main
        from harness.judge.worker.main import main

        # As a spawned worker's (`python -m harness.judge.worker FD`): its argument names its channel
        sys.argv = [str(Path(worker_main.__file__).with_name("__main__.py")), str(channel_fd)]

        code = main(channel_fd)
    except BaseException:  # noqa: BLE001 - whatever happens, the child leaves here and never returns to the server's loop
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)   # as a spawned worker leaves: without the interpreter's shutdown


if __name__ == "__main__":
    sys.exit(serve(int(sys.argv[1])))
