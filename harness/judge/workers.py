"""The judge's side of a worker: start it isolated, talk over the private channel, turn every
failure (exception, hang, signal, os._exit, memory blow-up) into a verdict."""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from harness.judge import memtrace
from harness.judge.device import worker_cpu_threads
from harness.judge.worker.hold import SWITCH as HOLD_SWITCH, requested as hold_requested
from harness.judge.worker.protocol import UnsafeMessage, dump, load_untrusted

OUTPUT_TAIL_CHARS = 2000
# Variables a worker keeps; everything else (keys, seeds, tokens, the user's config) is dropped.
# CUDA_VISIBLE_DEVICES: the worker must see the GPUs the judge sees (a Ray task is given one this way).
_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "CUDA_HOME", "CUDA_PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "CUDA_VISIBLE_DEVICES",
             "NVIDIA_VISIBLE_DEVICES", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "VIRTUAL_ENV", "TRITON_PTXAS_PATH",
             "TORCH_CUDA_ARCH_LIST", "CC", "CXX", "NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
             "NVSHMEM_DISABLE_NVLS")


class WorkerFailure(Exception):
    """The worker stopped answering: a timeout or a crash. ``status`` is the verdict."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass
class WorkerLimits:
    memory_bytes: int = 8 << 30
    load_s: float = 300.0
    first_call_s: float = 120.0
    call_s: float = 60.0
    timing_batch_s: float = 120.0


def per_worker_env(workdir: Path) -> dict[str, str]:
    """The variables that point into a worker's own directory: they differ between any two workers,
    so a spare's key leaves them out, and a forked worker sets them itself."""
    return {"HOME": str(workdir), "TMPDIR": str(workdir), "TRITON_CACHE_DIR": str(workdir / "triton-cache"),
            "TORCHINDUCTOR_CACHE_DIR": str(workdir / "inductor"), "TORCH_EXTENSIONS_DIR": str(workdir / "torch-extensions")}


_PER_WORKER_ENV = tuple(per_worker_env(Path("/")))
READY_TIMEOUT_S = 120.0


def spare_workers_enabled(device: str) -> bool:
    """Whether the judge starts the next workers ahead (CRUCIBLE_SPARE_WORKER=1/0; default: on).

    On the CPU too: a worker's start (importing torch and Triton) was most of an evaluation's wall
    time there (12 small Level 1 problems with `reference`: 136 s without spares, 99 s with), and a
    spare never starts beside a timing (the judge settles every spare before its rounds).
    """
    from harness.options import choice

    value = choice("CRUCIBLE_SPARE_WORKER", ("auto", "0", "1"))(os.environ.get("CRUCIBLE_SPARE_WORKER", "auto"))
    return value != "0"


class WorkerSession:
    """One worker process for one candidate. Use as a context manager; always cleaned up.

    Every candidate gets a fresh process. Starting one (Python, torch, Triton, the CUDA context)
    takes seconds, so where spare workers are on, the session adopts a worker started ahead that has
    run nothing but the harness's own start-up. No spare is ever alive while untrusted code runs
    (it could tamper with the process that will time a baseline): an untrusted session ends every
    spare but the one it adopts, and every session starts ``spares_ahead`` spares (the workers the
    next evaluation needs at once) only when it closes, once its worker is dead; a baseline's
    session (``spares_ahead`` 0) starts none.
    """

    def __init__(self, device: str, limits: WorkerLimits, gpu_index: int | None = None, trusted: bool = False,
                 spares_ahead: int = 1):
        self.device = device
        self.limits = limits
        self.gpu_index = gpu_index
        self.trusted = trusted
        self.spares_ahead = max(0, spares_ahead)   # 0: a session that starts none (a baseline's)
        self._spare_after_close: tuple | None = None
        self.workdir = Path(tempfile.mkdtemp(prefix="crucible-worker-"))
        self.log_path = self.workdir.parent / f"{self.workdir.name}.log"
        self.process: subprocess.Popen | None = None
        self.conn: Connection | None = None
        self.last_wall_s = 0.0
        self._last_reply_at: float | None = None  # the memory trace's idle time before a request
        self.ready = False          # the worker's start-up message has been read
        self.adopted_spare = False

    def __enter__(self) -> "WorkerSession":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def start(self) -> None:
        if not spare_workers_enabled(self.device):
            self._spawn()
            return
        key = self.spare_key()
        spare = _SPARES.take(key)
        if spare is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir, self.log_path, self.process, self.conn = spare.workdir, spare.log_path, spare.process, spare.conn
            self.ready, self.adopted_spare = spare.ready, True
        else:
            self._spawn()
        if not self.trusted:
            _SPARES.drain()  # any spare left over is not alive while this untrusted code runs
        if self.spares_ahead:
            # Started when this session closes, so that they start up while the next evaluation
            # builds its reference and checks correctness, not beside this one's timing (the judge
            # settles every spare still starting before a timing: started here at the session's
            # start, they made that wait most of a small CPU sweep's wall time).
            self._spare_after_close = key

    def spare_key(self) -> tuple:
        env = self._environment("")
        return (self.device, self.limits.memory_bytes, self.gpu_index,
                tuple(sorted((k, v) for k, v in env.items() if k not in _PER_WORKER_ENV)))

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S, phase: str = "start") -> None:
        """Read the worker's start-up message (sent once torch, Triton and the guards are in place)."""
        if self.ready:
            return
        reply = self._wait_reply(timeout_s, phase)
        if reply.get("ready") is not True:
            self.kill()
            raise WorkerFailure("crashed", f"the worker's first message in {phase} was not its start-up message")
        self.ready = True

    def _spawn(self) -> None:
        judge_end, worker_end = socket.socketpair()
        root = str(Path(__file__).resolve().parents[2])
        env = self._environment(root)
        self.process = _FORK_SERVERS.fork(self.spare_key(), env, worker_end.fileno(), self.workdir, self.log_path)
        if self.process is None:
            log = open(self.log_path, "wb")
            self.process = subprocess.Popen(
                [sys.executable, "-m", "harness.judge.worker", str(worker_end.fileno())],
                pass_fds=(worker_end.fileno(),), cwd=self.workdir, env=env,
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            )
            log.close()
        worker_end.close()
        self.conn = Connection(judge_end.detach())

    def _environment(self, root: str) -> dict:
        env = {k: v for k, v in os.environ.items() if k in _KEEP_ENV}
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        if self.gpu_index is not None:
            env["CRUCIBLE_GPU_INDEX"] = str(self.gpu_index)  # the device a CUDA worker initialises at start
        env.update(PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0", CRUCIBLE_JUDGE_PID=str(os.getpid()),
                   CRUCIBLE_DEVICE=self.device, CRUCIBLE_WORKER_MEMORY_BYTES=str(self.limits.memory_bytes),
                   **per_worker_env(self.workdir))
        if self.device == "cuda":  # the SM-filling hold before each timed window (harness/judge/worker/hold.py)
            env[HOLD_SWITCH] = "1" if hold_requested(os.environ) else "0"
        if self.device == "cpu":
            env["TRITON_INTERPRET"] = "1"
            # One thread and no spinning: OpenMP threads that busy-wait next to the judge's own on a
            # small machine make CPU timings swing by orders of magnitude.
            env.update(OMP_NUM_THREADS=str(worker_cpu_threads()), OMP_WAIT_POLICY="PASSIVE")
            env["CUDA_VISIBLE_DEVICES"] = ""
            # glibc fills every fresh allocation with 0x7f bytes (~3.4e38 as float32) and never uses
            # zeroed mmap pages, so an output the candidate allocates and never writes cannot pass.
            env.update(MALLOC_PERTURB_="128", MALLOC_MMAP_MAX_="0", MALLOC_TOP_PAD_=str(64 << 20))
        else:
            # Inductor hands kernels to a pool of compile subprocesses once the pool has warmed up, so
            # only long compiles (whole Level 3 networks) reach it. Under the worker's Landlock sandbox
            # that subprocess finds no GPU ("Could not find an active GPU backend", the baseline's
            # SubprocException): cuInit writes to the child's own /proc entry, which the sandbox cannot
            # name ahead.
            # One thread compiles in the worker itself, where CUDA was set up before the sandbox; the
            # harness's own code is given its pool back at load (guards.Guards.protect, compile_pool).
            env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
        if self.device != "cpu" and "CUDA_VISIBLE_DEVICES" in os.environ:
            # The worker sees the same GPUs as the judge: CUDA IPC handles name the judge's device index.
            env["CUDA_VISIBLE_DEVICES"] = os.environ["CUDA_VISIBLE_DEVICES"]
        return env

    def request(self, message: dict, timeout_s: float, phase: str) -> dict:
        """Send one message and wait for the reply, watching for hangs, crashes and memory."""
        assert self.conn is not None
        self.wait_ready(max(timeout_s, READY_TIMEOUT_S), phase)
        if self.device == "cuda":
            import torch

            torch.cuda.ipc_collect()  # inputs of earlier requests the worker has let go of
        started = time.perf_counter()
        nonce = secrets.randbits(62)
        try:
            self.conn.send_bytes(dump({**message, "phase": phase, "nonce": nonce}))
        except (BrokenPipeError, ConnectionResetError, OSError):
            raise self._crash(phase) from None
        reply = self._wait_reply(timeout_s, phase)
        self.last_wall_s = time.perf_counter() - started
        if self.device == "cuda" and memtrace.enabled():
            memtrace.record(str(message.get("op")), phase, self.process.pid if self.process else None,
                            _trace_fields(message, reply, started, self.last_wall_s, self._last_reply_at))
        self._last_reply_at = time.perf_counter()
        if reply.get("ok") and reply.get("nonce") != nonce:
            # Only the worker's handlers know the nonce: a success the candidate wrote to the channel
            # itself (a forged reply, or the real one pushed out of step by it) is refused.
            self.kill()
            raise WorkerFailure("rejected", f"a reply in {phase} that does not answer the request (forged on the channel)")
        return reply

    def _wait_reply(self, timeout_s: float, phase: str) -> dict:
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise WorkerFailure("timeout", f"no answer within {timeout_s:g} s in {phase}")
            try:
                ready = self.conn.poll(min(remaining, 0.25))
            except (EOFError, OSError):
                raise self._crash(phase) from None
            if ready:
                return self._receive(phase)
            self._check_alive_and_memory(phase)

    def _receive(self, phase: str) -> dict:
        try:
            data = self.conn.recv_bytes()
        except (EOFError, OSError, ConnectionResetError):
            raise self._crash(phase) from None
        try:
            reply = load_untrusted(data)
        except UnsafeMessage as error:
            self.kill()
            raise WorkerFailure("rejected", f"forged message on the result channel in {phase}: {error}") from None
        except Exception as error:
            self.kill()
            raise WorkerFailure("crashed", f"unreadable message from the worker in {phase}: {type(error).__name__}") from None
        if not isinstance(reply, dict):
            self.kill()
            raise WorkerFailure("rejected", f"malformed message on the result channel in {phase}")
        return reply

    def _check_alive_and_memory(self, phase: str) -> None:
        if self.process.poll() is not None:
            raise self._crash(phase)
        rss = _resident_bytes(self.process.pid)
        if rss is not None and rss > self.limits.memory_bytes:
            self.kill()
            raise WorkerFailure("crashed", f"out of memory in {phase}: resident memory {rss >> 20} MiB "
                                           f"over the limit of {self.limits.memory_bytes >> 20} MiB")

    def _crash(self, phase: str) -> WorkerFailure:
        code = self._wait_exit()
        tail = self.output_tail(400)
        if code is None:
            self.kill()
            return WorkerFailure("crashed", f"the worker closed the channel in {phase} without exiting")
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            what = "killed (likely out of memory)" if name == "SIGKILL" else f"killed by {name}"
            return WorkerFailure("crashed", f"worker {what} in {phase}. Output tail: {tail}")
        return WorkerFailure("crashed", f"worker exited with code {code} in {phase} before answering "
                                        f"(os._exit or sys.exit in the candidate?). Output tail: {tail}")

    def _wait_exit(self, timeout_s: float = 5.0) -> int | None:
        try:
            return self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return None

    def output_tail(self, limit: int = OUTPUT_TAIL_CHARS) -> str:
        try:
            data = self.log_path.read_bytes()[-limit:]
        except OSError:
            return ""
        return data.decode("utf-8", errors="replace")

    def pause(self) -> None:
        """Stop the worker and everything it started (SIGSTOP to its process group): while another
        role of an alternation is timed, an untrusted worker runs nothing, on the host or, beyond
        what it queued before its last synchronize, on the GPU."""
        self._signal_group(signal.SIGSTOP)

    def resume(self) -> None:
        self._signal_group(signal.SIGCONT)

    def _signal_group(self, number: int) -> None:
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, number)
            except (ProcessLookupError, PermissionError):
                pass

    def kill(self) -> None:
        """End the worker and whatever it started that is still running: its process group (the worker
        starts a session of its own). Also after the worker has exited cleanly on "bye": inductor's
        compile pool, or a process a candidate forked, would otherwise live on beside the next timings."""
        if self.process is None:
            return
        running = self.process.poll() is None
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            if running:
                self.process.kill()
        if running:
            self._wait_exit()

    def close(self) -> None:
        # No wait here for spares still starting: the judge settles them before each timing, and the
        # runner before it lets another process time on the GPU. Waiting at every close put each
        # spare's whole start-up into the evaluation that started it.
        self.resume()  # a paused worker would not read its "bye"
        if self.process is not None and self.process.poll() is None and self.conn is not None:
            try:
                self.conn.send_bytes(dump({"op": "bye"}))
            except OSError:
                pass
            if self._wait_exit(3.0) is None:
                self.kill()
        self.kill()
        if self.conn is not None:
            self.conn.close()
        if self.device == "cuda":
            import torch

            torch.cuda.ipc_collect()  # free what we shared with the worker once it has let go
        shutil.rmtree(self.workdir, ignore_errors=True)
        try:
            self.log_path.unlink()
        except OSError:
            pass
        key, self._spare_after_close = self._spare_after_close, None
        if key is not None:
            # As many as the next evaluation may need at once: its candidate's worker and, on a new
            # problem, its baselines' (harness.judge.baseline_workers), all started before it begins.
            _SPARES.fill(key, max(1, self.spares_ahead), lambda: WorkerSession(self.device, self.limits, self.gpu_index))


def _resident_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


class _SparePool:
    """Workers started ahead, all under one key (everything their start-up depended on), adopted
    oldest first."""

    def __init__(self):
        self.key: tuple | None = None
        self.sessions: list[WorkerSession] = []

    @property
    def session(self) -> WorkerSession | None:
        """The spare the next session would adopt, or None."""
        return self.sessions[0] if self.sessions else None

    def take(self, key: tuple) -> WorkerSession | None:
        if self.key != key:
            self.drain()
            return None
        while self.sessions:
            session = self.sessions.pop(0)
            if session.process is not None and session.process.poll() is None:
                return session
            session.close()
        return None

    def fill(self, key: tuple, count: int, make) -> None:
        """Start ``count`` spares from ``make()`` if there is none under ``key``; else leave it be."""
        if self.key != key:
            self.drain()
        if self.sessions:
            return
        self.key = key
        for _ in range(count):
            session = make()
            session._spawn()
            self.sessions.append(session)

    def settle(self, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Wait until every spare has finished starting; a spare that failed to start is dropped."""
        for session in list(self.sessions):
            if session.ready:
                continue
            try:
                session.wait_ready(timeout_s)
            except WorkerFailure:
                self.sessions.remove(session)
                session.close()

    def drain(self) -> None:
        sessions, self.sessions = self.sessions, []
        for session in sessions:
            session.close()


class _ForkServers:
    """The judge's fork servers (harness.judge.forkserver), one per worker environment, the two most
    recently used kept: workers are forked from one once it is up. A server is started at the second
    spawn under an environment, so that a one-off environment (a test's own limits) costs no server;
    while it starts, or where forking is off, workers are spawned."""

    KEEP = 2

    def __init__(self):
        self.servers: dict[tuple, object] = {}   # oldest first
        self.seen: set[tuple] = set()
        self.owner = os.getpid()

    @property
    def server(self):
        """The most recently used server, or None."""
        return next(reversed(self.servers.values()), None)

    def fork(self, key: tuple, env: dict, channel_fd: int, workdir: Path, log_path: Path):
        """A worker forked on ``channel_fd``, or None: the caller spawns it."""
        from harness.judge.forkserver import ForkServerError, fork_server_enabled

        if not fork_server_enabled():
            return None
        if self.owner != os.getpid():
            # This process was forked from the one that started the servers (a multiprocessing pool,
            # say): their channels belong to that process, so this one starts its own.
            self.servers, self.seen, self.owner = {}, set(), os.getpid()
        server = self.servers.pop(key, None)
        if server is not None and server.poll_ready() and not server.intact():
            self._close(server)         # tampered with, or gone: a new one for the next worker
            server = None
        if server is None:
            if key in self.seen:
                self._start(key, env)
            self.seen.add(key)
            return None
        self.servers[key] = server      # most recently used last
        if not server.ready:
            return None
        try:
            return server.fork(channel_fd, workdir, log_path, per_worker_env(workdir))
        except ForkServerError:
            self._close(self.servers.pop(key))
            return None

    def _start(self, key: tuple, env: dict) -> None:
        from harness.judge.forkserver import ForkServer

        while len(self.servers) >= self.KEEP:
            self._close(self.servers.pop(next(iter(self.servers))))
        workdir = Path(tempfile.mkdtemp(prefix="crucible-forkserver-"))
        self.servers[key] = ForkServer({**env, **per_worker_env(workdir)}, workdir)

    @staticmethod
    def _close(server) -> None:
        server.close()
        shutil.rmtree(server.workdir, ignore_errors=True)

    def close(self) -> None:
        servers, self.servers = self.servers, {}
        self.seen.clear()
        if self.owner != os.getpid():
            return   # a forked copy: the servers are its parent's to close
        for server in servers.values():
            self._close(server)


_SPARES = _SparePool()
_FORK_SERVERS = _ForkServers()
atexit.register(_FORK_SERVERS.close)  # registered first, so it runs last: after the spares it forked are gone
atexit.register(_SPARES.drain)


def settle_spare_workers() -> None:
    """Wait for a spare worker still starting up: its start-up must not overlap a timing."""
    _SPARES.settle()


def drain_spare_workers() -> None:
    _SPARES.drain()


def _trace_fields(message: dict, reply: dict, started: float, wall_s: float, last_reply_at: float | None) -> dict:
    """The memory trace's extra fields for one request: the worker's idle time before it and, for a
    timed batch, the reported times and cudaMalloc counts (all of it the judge's own copy)."""
    fields = {"wall_ms": round(1e3 * wall_s, 3)}
    if last_reply_at is not None:
        fields["idle_before_ms"] = round(1e3 * (started - last_reply_at), 3)
    if message.get("op") == "time":
        fields["times_ms"] = reply.get("times_ms")
        fields["device_allocs"] = reply.get("device_allocs")
        fields["device_frees"] = reply.get("device_frees")
        fields["alloc_retries"] = reply.get("alloc_retries")
    return fields

