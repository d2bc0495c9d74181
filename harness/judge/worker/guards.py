"""What the worker captures before the candidate is imported, and checks afterwards.

The candidate runs in this process, so it can patch anything. The guards make that costly and
visible rather than impossible:

- the clocks, synchronise and event methods the worker times with are captured here, before the
  candidate exists, so patching ``time`` or ``torch.cuda`` changes nothing the worker measures;
- the classes the reply path runs through (the worker's own, the channel, its pickler,
  torch.Tensor, torch.cuda.Event) are made immutable, as CPython's built-in types are;
- a snapshot of module-level functions the worker and torch rely on (clocks, the harness's worker
  modules, the pickler's reducer tables, builtins, signal handlers) is compared after every
  operation: any change is a finding;
- an audit hook (``harness.judge.worker.audit``) refuses candidate code the routes into the harness
  (frames, gc, trace hooks, signals, subprocesses, sockets, writes outside its directory) and
  records the rest (thread starts, ctypes calls, exec of strings); threads running candidate code
  are also found by their frames;
- a Landlock sandbox (``harness.judge.worker.sandbox``) enforces the file, network and signal limits
  in the kernel where Linux has it.

The judge's wall clock, checked outputs and fingerprints stay the independent checks.
Findings are labels (``time.perf_counter``, ``introspection:gc.get_objects``, ``thread:...``);
the judge turns them into flags with ``flags_for``.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

# Label prefix -> flag. Snapshot labels are dotted names; audit findings are "<kind>:<detail>".
TIMER_LABELS = ("time.", "torch.cuda", "torch._C._cuda_synchronize")
AUDIT_FLAGS = {"introspection": "introspection", "network": "network", "subprocess": "subprocess_started",
               "signal": "signal_sent", "native": "native_call", "dynamic_exec": "dynamic_exec",
               "filesystem": "filesystem_write", "disguise": "dynamic_exec", "thread": "thread_started",
               "timer": "timer_patched"}
_TIME_NAMES = ("perf_counter", "perf_counter_ns", "time", "time_ns", "monotonic", "monotonic_ns", "process_time",
               "process_time_ns", "thread_time", "sleep")
_TORCH_NAMES = ("allclose", "equal", "isclose", "Tensor")
_CUDA_NAMES = ("synchronize", "Event", "Stream", "current_stream", "default_stream", "set_stream", "stream")
_CACHE_VARIABLES = ("TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR")
_HARNESS_MODULES = ("harness.judge.worker.handlers", "harness.judge.worker.hold", "harness.judge.worker.main", "harness.judge.worker.protocol",
                    "harness.judge.worker.guards", "harness.judge.worker.audit", "harness.judge.checks", "harness.judge.precision")


def flags_for(labels) -> list[str]:
    """The integrity flags a list of findings stands for (see docs/EXPLOITS_CORPUS.md)."""
    flags = set()
    for label in labels or ():
        flags.add(_flag_for(str(label)))
    return sorted(flags)


def _flag_for(label: str) -> str:
    kind, _, detail = label.partition(":")
    if kind == "patch":
        label = detail
    elif detail and kind in AUDIT_FLAGS:
        return AUDIT_FLAGS[kind]
    if label.startswith(TIMER_LABELS):
        return "timer_patched"
    if label.startswith("harness."):
        return "harness_patched"
    if label.startswith("signal."):
        return "signal_handler"
    return "runtime_patched"


def _current(owner, key):
    if isinstance(owner, dict):
        return owner.get(key)
    if isinstance(owner, type):
        return owner.__dict__.get(key)
    return getattr(owner, key, None)


def _signal_handlers(_valid=signal.valid_signals, _get=signal.getsignal, _names=signal.Signals) -> dict:
    handlers = {}
    for number in _valid():
        try:
            handlers[_names(number).name] = _get(number)
        except (ValueError, OSError):
            continue
    return handlers


class _LaunchCounter:
    """Triton launches that returned without raising. Kept apart from the guards: the wrapper that
    increments it is reachable from triton's classes, and must lead nowhere else."""

    __slots__ = ("count",)

    def __init__(self):
        self.count = 0


def _allow_compile_threads() -> None:
    """Undo the worker environment's TORCHINDUCTOR_COMPILE_THREADS=1 (set for untrusted code, whose
    compile subprocesses cannot reach the GPU), so that inductor picks its own pool size."""
    os.environ.pop("TORCHINDUCTOR_COMPILE_THREADS", None)
    config = sys.modules.get("torch._inductor.config")
    if config is not None:  # already imported: it read the variable at import
        config.compile_threads = config.decide_compile_threads()


class Guards:
    def __init__(self, torch_module, triton_module=None):
        torch = torch_module
        self.perf_counter = time.perf_counter
        self.perf_counter_ns = time.perf_counter_ns
        self.main_thread = threading.get_ident()
        self.cuda_synchronize = self.event_record = self.event_elapsed = self.event_class = None
        if torch.cuda.is_available():
            # The C function, not the Python wrapper: the wrapper looks torch._C up at every call.
            self.cuda_synchronize = getattr(torch._C, "_cuda_synchronize", None) or torch.cuda.synchronize
            self.event_class = torch.cuda.Event
            self.event_record = torch.cuda.Event.record
            self.event_elapsed = torch.cuda.Event.elapsed_time
        self._launches = _LaunchCounter()
        if triton_module is not None:
            _hook_triton_launches(self._launches)
        self._import_watched_modules()
        self.snapshot = _snapshot(torch)
        self.signals = _signal_handlers()
        self.read_audit = lambda: []
        self.thread_findings: list[str] = []
        self.timer_findings: list[str] = []   # a hold that did not hold (handlers._timed_call)
        self.sandbox = "not applied"
        self.frozen: list[str] = []
        self._origins = None

    @property
    def triton_launches(self) -> int:
        return self._launches.count

    @staticmethod
    def _import_watched_modules() -> None:
        import harness.judge.checks  # noqa: F401  (the worker calls it after every forward)
        import harness.judge.precision  # noqa: F401
        import harness.judge.worker.audit  # noqa: F401
        import harness.judge.worker.handlers  # noqa: F401
        import harness.judge.worker.hold  # noqa: F401
        import harness.judge.worker.protocol  # noqa: F401

    def protect(self, workdir: str, compile_pool: bool = False, state_class: type | None = None) -> None:
        """Freeze the classes the worker's reply path runs through, install the audit hook and the
        sandbox; called once, right before the candidate's import.

        ``compile_pool`` (the judge grants it to the harness's own code alone: the eager and
        torch.compile baselines, the reference and inductor generators) makes all of /proc writable,
        so that inductor's compile subprocesses can set up CUDA: cuInit names its threads through
        /proc/<pid>/task/<tid>/comm, and a Landlock rule can name only the pids that exist when it is
        made. Untrusted code never gets it; its compiles
        run in-process (judge.WorkerSession._environment)."""
        from harness.judge.worker import audit, sandbox

        self.frozen = freeze_classes(_reply_path_classes(state_class))

        writable = [workdir, "/dev", "/dev/shm", "/proc" if compile_pool else f"/proc/{os.getpid()}"]
        if compile_pool:
            _allow_compile_threads()
        caches = tuple(os.environ.get(name, "") for name in _CACHE_VARIABLES)
        self.read_audit = audit.install(workdir, tuple(writable), caches)
        _report_thread_starts()
        try:
            self.sandbox = sandbox.apply(writable)
        except (OSError, AttributeError) as error:  # no libc syscall() on this platform
            self.sandbox = f"landlock: unavailable ({error})"

    def patched(self, _current=_current, _signal_handlers=_signal_handlers) -> list[str]:
        """Findings so far: captured functions that changed, signal handlers, audit and thread findings.
        (Helpers are bound as defaults: rebinding this module's names cannot change the check.)"""
        found = [label for label, (owner, key, original) in self.snapshot.items()
                 if _current(owner, key) is not original]
        found += [f"signal.{name}" for name, handler in _signal_handlers().items() if self.signals.get(name) is not handler]
        return found + self.read_audit() + self.thread_findings + self.timer_findings

    def scan_threads(self, _frames=sys._current_frames) -> int:
        """Record threads other than the worker's own that are running candidate code right now."""
        from harness.judge.worker.audit import CANDIDATE, Origins

        if self._origins is None:
            caches = tuple(os.environ.get(name, "") for name in _CACHE_VARIABLES)
            self._origins = Origins(os.path.realpath(os.getcwd()), caches)
        origins = self._origins
        frames = _frames()
        try:
            for ident, frame in frames.items():
                if ident == self.main_thread:
                    continue
                while frame is not None:
                    # Only the candidate's own files count here: library threads may run code that
                    # torch or triton generated without a file ("<string>"), which is not the candidate's.
                    filename = frame.f_code.co_filename
                    if filename.startswith(origins.workdir) and origins.of(filename) == CANDIDATE:
                        label = f"thread:{frame.f_code.co_name} in {os.path.basename(frame.f_code.co_filename)}"
                        if label not in self.thread_findings:
                            self.thread_findings.append(label)
                        break
                    frame = frame.f_back
        finally:
            # The dict holds this very frame, and `frame` may be left at it: either local makes a
            # reference cycle that keeps this frame, and so the caller's frame with its locals (the
            # timed call's output), alive until the cyclic collector runs: every timed call then
            # needs a new output block (found on the CPU; docs/HARNESS.md, "Why the CUDA window looks as it does").
            frames = frame = None
        return len(self.thread_findings)

    def new_threads(self) -> int:
        """Threads seen running candidate code, and thread starts the audit hook attributed to it."""
        return self.scan_threads() + sum(1 for label in self.read_audit() if label.startswith("thread:"))


def _snapshot(torch) -> dict:
    """label -> (owner, attribute, object now): everything whose identity must not change."""
    entries: dict = {}

    def add(label_prefix, owner, names):
        for name in names:
            value = _current(owner, name)
            if value is not None:
                entries[f"{label_prefix}.{name}"] = (owner, name, value)

    add("time", time, _TIME_NAMES)
    add("torch", torch, _TORCH_NAMES)
    add("torch.cuda", torch.cuda, _CUDA_NAMES)
    add("torch._C", torch._C, ("_cuda_synchronize",))
    # Classes (torch.Tensor, torch.cuda.Event, the harness's own) are not snapshotted: assigning to a
    # class attribute is an audit event, refused to candidate code and allowed to torch's own lazy setup.
    add("sys", sys, ("_current_frames", "_getframe", "settrace", "setprofile", "audit", "addaudithook"))
    for module_name in _HARNESS_MODULES:
        module = sys.modules.get(module_name)
        if module is not None:
            add(module_name, vars(module), [k for k in vars(module) if not k.startswith("__")])
    import builtins
    import copyreg
    from multiprocessing.reduction import ForkingPickler

    add("builtins", vars(builtins), [k for k in vars(builtins) if k != "_"])
    add("multiprocessing.reduction.ForkingPickler._extra_reducers", ForkingPickler._extra_reducers,
        list(ForkingPickler._extra_reducers))
    add("copyreg.dispatch_table", copyreg.dispatch_table, list(copyreg.dispatch_table))
    reductions = sys.modules.get("torch.multiprocessing.reductions")
    if reductions is not None:
        add("torch.multiprocessing.reductions", vars(reductions), [k for k in vars(reductions) if not k.startswith("__")])
    return entries


def _reply_path_classes(state_class: type | None = None) -> list[type]:
    """Classes whose methods the worker calls after the candidate exists: the worker's own (its
    state's class is handed in by whoever calls ``protect``, so that the guards need not import the
    worker's main loop), the channel and its pickler, torch.Tensor (fingerprints, pickling) and the
    CUDA event (timing)."""
    import torch
    from multiprocessing import connection, reduction

    from harness.judge.worker import audit

    classes = [Guards, _LaunchCounter, state_class, audit.Origins, audit._Policy, connection.Connection,
               connection._ConnectionBase, reduction.ForkingPickler, torch.Tensor, torch.cuda.Event]
    return [cls for cls in classes if isinstance(cls, type)]


_IMMUTABLE_TYPE = 1 << 8   # Py_TPFLAGS_IMMUTABLETYPE (CPython 3.10+)


def freeze_classes(classes: list[type]) -> list[str]:
    """Make classes immutable the way CPython's own built-in types are: ``Cls.attr = x`` and even
    ``type.__setattr__(Cls, ...)`` raise TypeError. Python offers no such switch for classes written
    in Python, so the flag is set in the type object (the offset found and checked on known types)."""
    import ctypes

    offset = _type_flags_offset(ctypes)
    if offset is None:
        return []
    for cls in classes:
        ctypes.c_ulong.from_address(id(cls) + offset).value |= _IMMUTABLE_TYPE
    return [f"{cls.__module__}.{cls.__qualname__}" for cls in classes if cls.__flags__ & _IMMUTABLE_TYPE]


def _type_flags_offset(ctypes) -> int | None:
    class Probe:
        pass

    known = (type, int, object, Probe)
    for offset in range(8, 512, 8):
        if all(ctypes.c_ulong.from_address(id(cls) + offset).value == cls.__flags__ for cls in known):
            return offset
    return None


def _report_thread_starts() -> None:
    """Raise an audit event at every thread start, so the hook can attribute it to its acting frame.
    The wrapper holds the original and sys.audit only: nothing that leads back to the guards."""
    import _thread

    def wrap(original, _audit=sys.audit):
        def start_new_thread(function, args, kwargs=None):
            _audit("crucible.thread_start", getattr(function, "__qualname__", "?"))
            return original(function, args, kwargs or {})

        return start_new_thread

    threading._start_new_thread = wrap(threading._start_new_thread)
    _thread.start_new_thread = wrap(_thread.start_new_thread)


def _hook_triton_launches(counter: _LaunchCounter) -> None:
    """Count Triton kernel launches (compiled or interpreted) that complete: a launch that raises
    (and is caught by a fallback) is not a kernel that ran."""
    for module_name, class_name in (("triton.runtime.jit", "JITFunction"),
                                    ("triton.runtime.interpreter", "InterpretedFunction")):
        try:
            module = __import__(module_name, fromlist=[class_name])
            cls = getattr(module, class_name)
        except (ImportError, AttributeError):
            continue
        original = cls.run

        def counted(self, *args, __original=original, **kwargs):
            result = __original(self, *args, **kwargs)
            counter.count += 1
            return result

        cls.run = counted
