"""Worker process entry: import the candidate, run what the judge asks, report over the private channel.

Started by the judge as ``python -m harness.judge.worker <fd>`` with a private cwd and a scrubbed
environment. Never computes or sees expected outputs.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback
from multiprocessing.connection import Connection

MAX_TRACEBACK_CHARS = 4000


def main(fd: int) -> int:
    _end_with_the_judge()
    _limit_memory()
    import torch
    import torch.multiprocessing

    torch.multiprocessing.set_sharing_strategy("file_system")
    triton = _import_triton()
    from harness.judge.worker.guards import Guards
    from harness.judge.worker.protocol import EXIT_OK, dump

    _initialise_cuda(torch)
    hold, hold_error = _build_hold(torch, triton)  # before the guards count Triton launches
    guards = Guards(torch, triton)
    conn = Connection(fd)
    state = State(torch, guards)
    state.hold, state.hold_error = hold, hold_error
    # Start-up is done: the judge may have started this worker ahead as a spare and waits for this.
    conn.send_bytes(dump({"ready": True}))
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return EXIT_OK
        if message.get("op") == "bye":
            state.release()
            return EXIT_OK
        reply = state.handle(message)
        conn.send_bytes(dump(reply))
        # Let go of this request's inputs and reply before waiting for the next one: held here, the
        # last outputs sent by CUDA IPC stay allocated through the next request (on a full-size
        # problem, one output more in GPU memory while the next call runs).
        del message, reply


def _end_with_the_judge(period_s: float = 0.5) -> None:
    """End this worker's process group soon after the judge dies.

    A judge killed from outside (a time limit's SIGTERM, SIGKILL) closes the channel, but a worker
    busy in a long request (a whole network's compile, a timing loop) does not read it until the
    request ends, and would go on loading the GPU beside the next run's timings (seen on an H100:
    an eager median 1.64x too slow after a killed compile baseline). A watcher thread,
    started before any candidate code exists, notices the new parent and kills the group (the
    worker and whatever it started; Landlock's signal scope allows a group of its own). Not
    PR_SET_PDEATHSIG: that fires when the spawning *thread* ends, which need not be the judge's end."""
    import signal
    import threading
    import time

    judge = int(os.environ.get("CRUCIBLE_JUDGE_PID", "0") or 0)
    if not judge:
        return

    def watch() -> None:
        while os.getppid() == judge:
            time.sleep(period_s)
        if os.getpgid(0) == os.getpid():     # the judge starts each worker in a session of its own
            os.killpg(0, signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="crucible-judge-watch", daemon=True).start()


def _limit_memory() -> None:
    limit = int(os.environ.get("CRUCIBLE_WORKER_MEMORY_BYTES", "0"))
    if limit and os.environ.get("CRUCIBLE_DEVICE") == "cpu":
        import resource

        # Address-space limits break CUDA (it reserves huge virtual ranges), so only on the CPU;
        # on the GPU the judge watches the worker's resident memory instead.
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _initialise_cuda(torch) -> None:
    """Create the CUDA context now, before any candidate code: it is most of a GPU worker's start-up."""
    if os.environ.get("CRUCIBLE_DEVICE") != "cuda" or not torch.cuda.is_available():
        return
    torch.cuda.set_device(int(os.environ.get("CRUCIBLE_GPU_INDEX", "0")))
    torch.cuda.init()
    torch.empty(1, device="cuda")


def _build_hold(torch, triton):
    """The SM-filling hold queued before each timed CUDA window (harness.judge.worker.hold), compiled now,
    before any candidate code and while spare workers wait; (None, reason) where it cannot be had."""
    from harness.judge.worker import hold

    if not hold.requested(os.environ) or os.environ.get("CRUCIBLE_DEVICE") != "cuda" or not torch.cuda.is_available():
        return None, None
    if triton is None:
        return None, "triton is not installed"
    try:
        return hold.Hold(torch), None
    except Exception as error:  # the run goes on with the window opening on an idle GPU, and says so
        return None, f"{type(error).__name__}: {str(error)[:300]}"


def _import_triton():
    try:
        import triton
        import triton.language  # noqa: F401
        return triton
    except ImportError:
        return None


def classify(error: BaseException, phase: str) -> tuple[str, str]:
    """Map an exception raised by candidate code to a verdict and a one-line reason."""
    name, text = type(error).__name__, str(error)
    lowered = text.lower()
    if isinstance(error, MemoryError) or name == "OutOfMemoryError" or "out of memory" in lowered \
            or "can't allocate memory" in lowered or "cannot allocate memory" in lowered:
        return "crashed", f"out of memory in {phase}: {name}: {text[:300]}"
    if name == "_OutputTypeError":
        return "incorrect", text[:500]
    if isinstance(error, SystemExit):
        return "crashed", f"candidate called sys.exit({error.code!r}) in {phase}"
    if "illegal memory access" in lowered or "device-side assert" in lowered or "cuda error" in lowered:
        return "crashed", f"CUDA fault in {phase}: {text[:300]}"
    if phase == "load" or isinstance(error, SyntaxError):
        return "compile_error", f"{name}: {text[:500]}"
    module = type(error).__module__ or ""
    if module.startswith("triton") and ("compil" in name.lower() or "compil" in lowered[:200]):
        return "compile_error", f"Triton compilation failed: {name}: {text[:500]}"
    return "runtime_error", f"{name} in {phase}: {text[:500]}"


def bounded_traceback(error: BaseException) -> str:
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    if len(text) > MAX_TRACEBACK_CHARS:
        text = "... (truncated)\n" + text[-MAX_TRACEBACK_CHARS:]
    return text


class State:
    """The worker's state between messages: the candidate model, timing inputs, retained outputs."""

    def __init__(self, torch_module, guards):
        from harness.judge.worker import handlers

        self.torch = torch_module
        self.guards = guards
        self.model = None
        self.device = "cpu"
        self.timing_sets: list = []
        self.retained: list = []
        self.flush_buffer = None
        self.sync_floor_ms = None      # CUDA: the closing synchronize's least round trip (handlers.load)
        self.hold = self.hold_error = None  # CUDA: the SM-filling hold before each window (main._build_hold)
        self.handlers = handlers.HANDLERS

    def handle(self, message: dict) -> dict:
        op = message.get("op")
        handler = self.handlers.get(op)
        if handler is None:
            return {"ok": False, "kind": "runtime_error", "message": f"unknown op {op!r}"}
        phase = message.get("phase", op)
        if self.device == "cuda":
            # Outputs sent to the judge by CUDA IPC stay allocated here until collected once the
            # judge has let go: five full-size trials left uncollected held 54 GiB on an H200.
            self.torch.cuda.ipc_collect()
        try:
            reply = handler(self, message)
        except BaseException as error:  # everything the candidate raises becomes a verdict
            kind, reason = classify(error, phase)
            reply = {"ok": False, "kind": kind, "message": reason, "traceback": bounded_traceback(error)}
        reply.setdefault("patched", self.guards.patched())
        reply.setdefault("new_threads", self.guards.new_threads())
        reply.setdefault("triton_launches", self.guards.triton_launches)
        return reply

    def release(self) -> None:
        """Drop every tensor received from the judge before exiting: CUDA IPC counts references
        across processes, and the judge can free a tensor it shared only once this side lets go."""
        import gc

        self.timing_sets, self.retained, self.model = [], [], None
        gc.collect()
        if self.device == "cuda":
            self.torch.cuda.synchronize()

    def import_candidate(self, source: str):
        path = os.path.join(os.getcwd(), "candidate.py")
        with open(path, "w") as handle:
            handle.write(source)
        spec = importlib.util.spec_from_file_location("candidate", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["candidate"] = module
        spec.loader.exec_module(module)
        return module


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1])))
