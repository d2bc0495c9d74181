"""Kernel-enforced limits on the worker, where Linux offers them (Landlock, unprivileged).

Applied in the worker right before the candidate is imported, and inherited by every process
the worker starts (compilers included), so they hold even against native code and
subprocesses, which the audit hook cannot see:

- file-system writes only beneath the private work directory, /dev and /dev/shm (shared-memory
  tensors) and the worker's own /proc entry; reads stay open (torch, triton, CUDA need them);
- no TCP connect or bind (Landlock ABI 4+);
- no signals to, and no abstract Unix sockets of, processes outside the sandbox (ABI 6+): the
  candidate cannot kill the judge;
- no ptrace of processes outside the sandbox (every ABI): /proc/<judge>/mem is closed to it.

Where the kernel lacks Landlock (or a seccomp profile refuses it), nothing is applied and
``apply`` says so; the audit hook's policy still stands.
"""

from __future__ import annotations

import ctypes
import os

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446   # same on x86-64 and arm64
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_FS_WRITE_V1 = sum(1 << bit for bit in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12))   # write, remove, make-*
_FS_REFER, _FS_TRUNCATE = 1 << 13, 1 << 14
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def abi_version(libc=None) -> int:
    libc = libc or ctypes.CDLL(None, use_errno=True)
    version = libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(version))


def apply(writable: list[str]) -> str:
    """Restrict this process and its future children; return a one-line description."""
    libc = ctypes.CDLL(None, use_errno=True)
    abi = abi_version(libc)
    if abi < 1:
        return "landlock: unavailable"
    fs_rights = _FS_WRITE_V1 | (_FS_REFER if abi >= 2 else 0) | (_FS_TRUNCATE if abi >= 3 else 0)
    attr = _RulesetAttr(fs_rights, _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0,
                        _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return f"landlock: ruleset refused ({os.strerror(ctypes.get_errno())})"
    try:
        for path in writable:
            _allow_beneath(libc, ruleset, path, fs_rights)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            return f"landlock: restrict refused ({os.strerror(ctypes.get_errno())})"
    finally:
        os.close(ruleset)
    return f"landlock: abi {abi}, writes beneath {len(writable)} paths, tcp {'off' if abi >= 4 else 'open'}, " \
           f"signals {'scoped' if abi >= 6 else 'open'}"


def _allow_beneath(libc, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a path this machine lacks (no /dev/shm) simply gets no rule
    try:
        rule = _PathBeneathAttr(rights if os.path.isdir(path) else rights & ((1 << 1) | _FS_TRUNCATE), fd)
        libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0))
    finally:
        os.close(fd)
