"""The worker's audit hook (PEP 578): sees what candidate code does, blocks the routes into the
harness, and remembers what it saw where the candidate cannot erase it.

An audit hook cannot be removed from Python once installed. It runs for events such as frame
access, ``gc.get_objects``, file writes, sockets, subprocesses, ``ctypes`` calls and the
replacement of a function's code or defaults. (Plain class attribute assignment raises no event;
the guards make the classes that matter immutable instead.) The hook attributes each event to its *acting frame*: the nearest frame on the
stack that is not standard-library code. Events acted by library code (torch, triton, the
harness) pass untouched, so torch.compile or Triton may do as they please; events acted by the
candidate (its file, code it exec'd, anything outside the installed libraries) are recorded,
and the ones that would let it reach or rewrite the harness are refused with PermissionError.

Findings live only in the hook's closure. They are read through a private audit event that hands
back a copy, so a candidate can read them but never clear them. Only ``gc`` (refused to the
candidate) reaches the closure itself.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from typing import Callable

REPORT_EVENT = "crucible.audit.findings"
THREAD_EVENT = "crucible.thread_start"   # raised by the guards' wrapper around _thread.start_new_thread
CANDIDATE, LIBRARY, TRANSPARENT = "candidate", "library", "transparent"

# Events the hook looks at; every other event returns at the first line.
_WATCHED = frozenset({
    "object.__setattr__", "object.__delattr__", "object.__getattr__", "sys._getframe", "sys._current_frames",
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.settrace", "sys.setprofile",
    "open", "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.symlink", "os.link", "os.chmod", "os.truncate",
    "os.chown", "os.utime", "shutil.rmtree", "socket.connect", "socket.bind", "socket.sendto", "socket.getaddrinfo",
    "subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
    "os.kill", "os.killpg", "signal.pthread_kill", "ctypes.dlopen", "ctypes.dlsym", "ctypes.call_function",
    "ctypes.cdata", "ctypes.string_at", "ctypes.wstring_at", "exec", "compile", "code.__new__", "marshal.loads",
    REPORT_EVENT, THREAD_EVENT, "_thread.start_new_thread",
})
# Pseudo file names of code torch generates (torch.fx graph modules); compiling under them is refused.
_GENERATED_PSEUDO_FILES = ("<eval_with_key>",)
_FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
# Stdlib modules that hand frame objects back to their caller (inspect.currentframe, traceback.walk_tb).
_FRAME_HANDING_STDLIB = ("inspect.py", "traceback.py")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = {"os.remove": (0,), "os.rmdir": (0,), "os.mkdir": (0,), "os.chmod": (0,), "os.chown": (0,),
                "os.utime": (0,), "os.truncate": (0,), "shutil.rmtree": (0,), "os.rename": (0, 1),
                "os.symlink": (1,), "os.link": (1,)}
_REFUSED = {  # event -> finding kind; refused to the candidate outright
    "sys._current_frames": "introspection", "gc.get_objects": "introspection", "gc.get_referrers": "introspection",
    "gc.get_referents": "introspection", "sys.settrace": "introspection", "sys.setprofile": "introspection",
    "socket.connect": "network", "socket.bind": "network", "socket.sendto": "network", "socket.getaddrinfo": "network",
    "subprocess.Popen": "subprocess", "os.system": "subprocess", "os.exec": "subprocess", "os.posix_spawn": "subprocess",
    "os.spawn": "subprocess", "os.fork": "subprocess", "os.forkpty": "subprocess", "os.kill": "signal",
    "os.killpg": "signal", "signal.pthread_kill": "signal",
}
_RECORDED = {"ctypes.dlopen": "native", "ctypes.dlsym": "native", "ctypes.call_function": "native",
             "ctypes.cdata": "native", "ctypes.string_at": "native", "ctypes.wstring_at": "native",
             THREAD_EVENT: "thread", "_thread.start_new_thread": "thread"}
MAX_FINDINGS = 200


class Origins:
    """Where a code object's file lies: standard library (transparent), installed library, or candidate."""

    def __init__(self, workdir: str, generated: tuple[str, ...] = ()):
        paths = sysconfig.get_paths()
        # Code torch and triton generate at run time into their caches (the candidate may not write there).
        self.generated = tuple(_real(p) for p in generated if p)
        self.stdlib = tuple({_real(paths["stdlib"]), _real(paths["platstdlib"])})
        libraries = {_real(paths["purelib"]), _real(paths["platlib"])}
        for entry in sys.path:
            real = _real(entry) if entry else ""
            if real and not real.startswith(workdir) and not real.startswith(self.stdlib):
                libraries.add(real)
        self.libraries = tuple(sorted(libraries, key=len, reverse=True))
        self.workdir = workdir
        self._cache: dict[str, str] = {}

    def of(self, filename: str) -> str:
        kind = self._cache.get(filename)
        if kind is None:
            kind = self._classify(filename)
            self._cache[filename] = kind
        return kind

    def _classify(self, filename: str) -> str:
        if filename.startswith("<frozen "):
            return TRANSPARENT
        if filename.startswith(_GENERATED_PSEUDO_FILES) or (self.generated and _real(filename).startswith(self.generated)):
            return LIBRARY
        if not filename.startswith("/") or filename.startswith(self.workdir):
            return CANDIDATE
        real = _real(filename)
        if real.startswith(self.libraries):
            return LIBRARY
        if real.startswith(self.stdlib):
            return TRANSPARENT
        return CANDIDATE

    def looks_installed(self, filename) -> bool:
        """A file name a candidate could use to disguise its own code as library code."""
        return isinstance(filename, str) and self.of(filename) != CANDIDATE


def _real(path: str) -> str:
    return os.path.realpath(path) if path else path


def install(workdir: str, writable: tuple[str, ...], protected_caches: tuple[str, ...]) -> Callable[[], list[str]]:
    """Install the hook; return a function that reads a copy of the findings."""
    origins = Origins(_real(workdir), protected_caches)
    policy = _Policy(origins, tuple(_real(p) for p in writable), tuple(_real(p) for p in protected_caches if p))
    sys.addaudithook(policy.hook())

    def read(_audit=sys.audit) -> list[str]:
        box: list = []
        _audit(REPORT_EVENT, box)
        return box

    return read


class _Policy:
    def __init__(self, origins: Origins, writable: tuple[str, ...], protected_caches: tuple[str, ...]):
        self.origins = origins
        self.writable = writable
        self.protected_caches = protected_caches

    def hook(self):
        """The hook closure; ``findings`` is reachable from nothing but this closure."""
        findings: list[str] = []
        busy: set[int] = set()
        decide, watched = self.decide, _WATCHED
        from _thread import get_ident
        getframe = sys._getframe

        def audit_hook(event, args):
            if event not in watched:
                return
            if event == REPORT_EVENT:
                if args and isinstance(args[0], list):
                    args[0].extend(findings)
                return
            me = get_ident()
            if me in busy:  # events raised by the hook's own frame walking
                return
            busy.add(me)
            try:
                # A thread-start event comes from the guards' wrapper: attribute it to the wrapper's caller.
                verdict = decide(event, args, getframe(2 if event == THREAD_EVENT else 1))
            finally:
                busy.discard(me)
            if verdict is None:
                return
            kind, detail, refuse = verdict
            if len(findings) < MAX_FINDINGS:
                findings.append(f"{kind}:{detail}")
            if refuse:
                raise PermissionError(f"crucible worker: {event} refused to candidate code ({kind}: {detail})")

        return audit_hook

    def decide(self, event: str, args: tuple, caller) -> tuple[str, str, bool] | None:
        """(finding kind, detail, refuse) for an event acted by the candidate; None otherwise."""
        if event == "object.__getattr__" and (len(args) < 2 or args[1] not in _FRAME_ATTRIBUTES):
            return None
        if (event == "open" and _opens_for_writing(args)) or event in _PATH_EVENTS:
            # Writes are judged by where they land whoever performs them (torch.save, shutil...),
            # as long as candidate code is anywhere on the stack.
            if not self._candidate_on_stack(caller):
                return None
            return self._filesystem(event, args, self._acting(caller)[0] == CANDIDATE)
        acting, direct = self._acting(caller)
        if acting != CANDIDATE:
            return None
        if event in _REFUSED:
            return _REFUSED[event], _describe(event, args), True
        if event in _RECORDED:
            return _RECORDED[event], _describe(event, args), False
        return self._decide_specific(event, args, caller, direct)

    def _decide_specific(self, event, args, caller, direct):
        if event in ("object.__setattr__", "object.__delattr__"):
            return self._attribute_write(args)
        if event == "object.__getattr__" or event == "sys._getframe":
            if direct == CANDIDATE or _file_of(caller).endswith(_FRAME_HANDING_STDLIB):
                return "introspection", f"{event} {args[1] if len(args) > 1 else ''}".strip(), True
            return None
        if event in ("exec", "compile", "code.__new__", "marshal.loads"):
            return self._dynamic_code(event, args, direct)
        return self._filesystem(event, args, True)

    def _acting(self, frame) -> tuple[str | None, str | None]:
        """Origin of the acting frame (nearest non-stdlib) and of the direct caller."""
        direct = None
        while frame is not None:
            kind = self.origins.of(frame.f_code.co_filename)
            if direct is None:
                direct = kind
            if kind != TRANSPARENT:
                return kind, direct
            frame = frame.f_back
        return None, direct

    def _candidate_on_stack(self, frame) -> bool:
        while frame is not None:
            if self.origins.of(frame.f_code.co_filename) == CANDIDATE:
                return True
            frame = frame.f_back
        return False

    def _attribute_write(self, args):
        target, name = args[0], args[1] if len(args) > 1 else "?"
        owner = _owner_module(target)
        if owner is None or not _installed_module(owner, self.origins):
            return None
        label = f"{owner}.{getattr(target, '__qualname__', getattr(target, '__name__', '?'))}.{name}"
        return "patch", label, True

    def _dynamic_code(self, event, args, direct):
        """Code the candidate builds itself (imports, dataclasses and namedtuples build theirs in the
        standard library and pass). Refused when it would carry an installed library's file name."""
        if direct != CANDIDATE:
            return None
        if event == "marshal.loads":
            return "dynamic_exec", "marshal.loads", True
        filename = args[1] if event in ("compile", "code.__new__") and len(args) > 1 else None
        if filename is None and event == "exec" and args:
            filename = getattr(args[0], "co_filename", None)
        if self.origins.looks_installed(filename):
            return "disguise", f"{event} as {filename}", True
        if event in ("exec", "compile"):
            return "dynamic_exec", f"{event} {filename if isinstance(filename, str) else ''}".strip(), False
        return None

    def _filesystem(self, event, args, acting: bool):
        """Writes outside the writable roots are refused; writes into torch's and triton's code
        caches are refused only when the candidate itself makes them (it could plant code there)."""
        if event == "open" and _other_process(args[0] if args else None):
            return "introspection", f"open {args[0]!s:.120}", True
        if event == "open":
            paths = [args[0]] if _opens_for_writing(args) else []
        else:
            paths = [args[i] for i in _PATH_EVENTS.get(event, ()) if i < len(args)]
        for path in paths:
            if isinstance(path, int) or path is None:
                continue
            real = _real(os.fsdecode(path))
            if not _beneath(real, self.writable) or (acting and _beneath(real, self.protected_caches)):
                return "filesystem", f"{event} {real}", True
        return None


def _beneath(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _opens_for_writing(args) -> bool:
    mode = args[1] if len(args) > 1 else None
    flags = args[2] if len(args) > 2 else 0
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return True
    return isinstance(flags, int) and flags > 0 and bool(flags & _WRITE_FLAGS)


def _other_process(path) -> bool:
    """/proc/<pid>/... of another process: its memory, environment, command line (the judge's)."""
    if not isinstance(path, (str, bytes)):
        return False
    parts = os.fsdecode(path).split("/")
    return len(parts) > 2 and parts[1] == "proc" and parts[2].isdigit() and int(parts[2]) != os.getpid()


def _owner_module(target) -> str | None:
    if isinstance(target, type) or callable(target):
        owner = getattr(target, "__module__", None)
        return owner if isinstance(owner, str) else None
    return None


def _installed_module(name: str, origins: Origins) -> bool:
    module = sys.modules.get(name)
    if module is None:
        return name.split(".")[0] in ("torch", "triton", "harness")
    filename = getattr(module, "__file__", None)
    if filename is None:
        return name in sys.builtin_module_names or name.split(".")[0] in ("torch", "triton", "harness")
    return origins.of(filename) != CANDIDATE


def _file_of(frame) -> str:
    return frame.f_code.co_filename if frame is not None else ""


def _describe(event: str, args: tuple) -> str:
    """The event and its first argument, never calling candidate code (no repr of its objects)."""
    if not args:
        return event
    first = args[0]
    shown = repr(first) if type(first) in (str, bytes, int, float, type(None)) else type(first).__name__
    return f"{event} {shown}"[:160]
