"""Which part of the worker's Landlock sandbox stops a child process from finding the GPU? (CUDA only)

    python bench/sandbox_cuda_probe.py

Inductor's compile pool is a fresh process that the worker starts after its sandbox is applied; on
the H100 (2026-12-05, bench/inductor_subprocess_probe.py) it reported "Could not find an active GPU
backend" under the sandbox and compiled fine without it. Each variant here starts a parent that sets
up CUDA, applies one variant of the sandbox, then starts a child that asks torch for the GPU, as the
pool does. The variants take the sandbox apart: the worker's rules as they are, with more paths
writable (/proc, /tmp, /sys, /run, /var, everything), with no scoping of signals and abstract Unix
sockets, and with scoping alone. One line per variant: whether the child saw the GPU, and the
warning torch gave when it did not.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PARENT = textwrap.dedent("""
    import ctypes, os, subprocess, sys
    sys.path.insert(0, {root!r})
    import torch
    torch.empty(1, device="cuda")
    from harness.worker import sandbox as s
    extra, fs, scoped = {extra!r}, {fs!r}, {scoped!r}
    writable = [os.getcwd(), "/dev", "/dev/shm", f"/proc/{{os.getpid()}}"] + extra
    libc = ctypes.CDLL(None, use_errno=True)
    abi = s.abi_version(libc)
    fs_rights = (s._FS_WRITE_V1 | (s._FS_REFER if abi >= 2 else 0) | (s._FS_TRUNCATE if abi >= 3 else 0)) if fs else 0
    scopes = (s._SCOPE_ABSTRACT_UNIX | s._SCOPE_SIGNAL) if (scoped and abi >= 6) else 0
    net = (s._NET_BIND_TCP | s._NET_CONNECT_TCP) if abi >= 4 else 0
    attr = s._RulesetAttr(fs_rights, net, scopes)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8
    ruleset = libc.syscall(s._SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    assert ruleset >= 0, os.strerror(ctypes.get_errno())
    if fs:
        for path in writable:
            s._allow_beneath(libc, ruleset, path, fs_rights)
    if fs is not None:   # None: the control, no sandbox at all
        assert libc.prctl(s._PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0
        assert libc.syscall(s._SYS_RESTRICT_SELF, ruleset, 0) == 0, os.strerror(ctypes.get_errno())
    child = subprocess.run([sys.executable, "-W", "always", "-c",
                            "import torch; print('child sees GPU:', torch.cuda.is_available(), torch.cuda.device_count())"],
                           capture_output=True, text=True, timeout=120)
    text = (child.stdout + child.stderr).replace("\\n", " ")
    print(f"abi {{abi}}: {{text[-400:]}}")
""")

VARIANTS = [
    ("no sandbox (control)", [], None, False),
    ("as the worker", [], True, True),
    ("+ /proc", ["/proc"], True, True),
    ("+ /tmp", ["/tmp"], True, True),
    ("+ /sys", ["/sys"], True, True),
    ("+ /run /var", ["/run", "/var"], True, True),
    ("+ / (all paths)", ["/"], True, True),
    ("fs rules, no scoping", [], True, False),
    ("scoping only", [], False, True),
]


def main() -> int:
    started = []
    for name, extra, fs, scoped in VARIANTS:   # all at once: each is a few seconds of start-up
        work = tempfile.mkdtemp(prefix="sandbox-probe-")
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")}
        env.update(HOME=work, TMPDIR=work, PYTHONPATH=str(ROOT))
        source = PARENT.format(root=str(ROOT), extra=extra, fs=fs, scoped=scoped)
        started.append((name, subprocess.Popen([sys.executable, "-c", source], cwd=work, env=env, text=True,
                                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)))
    print("=== sandbox variants: does a child of the sandboxed process see the GPU?")
    for name, process in started:
        try:
            text, _ = process.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            process.kill()
            print(f"{name:22s} timeout")
            continue
        lines = [line for line in text.splitlines() if line.strip()]
        print(f"{name:22s} exit {process.returncode}: {lines[-1][:400] if lines else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
