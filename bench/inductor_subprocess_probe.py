"""Why does torch.compile fail on whole Level 3 networks inside the harness's worker? (CUDA only)

    python bench/inductor_subprocess_probe.py [--problem 'L3/19_*']

On the H200 (2026-12-05) the compile baseline failed on most whole networks with inductor's
``SubprocException ... triton_poi_fused_convolution_0 ... load_kernel()``, while small graphs
compiled. Inductor compiles in-process until its subprocess pool has warmed up, so only graphs that
take long enough reach the pool. This compiles one such problem in fresh child processes, each
printing ok or the tail of its error, under one condition each:

    plain        torch.compile as a user would run it
    scrubbed     with the worker's environment (HOME, TMPDIR and caches in a private directory)
    sandboxed    scrubbed, plus the worker's Landlock sandbox (harness/worker/sandbox.py) applied first
    one-thread   sandboxed, with TORCHINDUCTOR_COMPILE_THREADS=1 (no subprocess pool)

and then lists the processes each child left running after it exited.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = textwrap.dedent("""
    import os, sys, time, traceback
    sys.path.insert(0, {root!r})
    import torch
    from harness.suite import load_selected
    from harness.reference import ReferenceEnv
    torch.empty(1, device="cuda")
    if {sandboxed!r}:
        from harness.worker import sandbox
        work = os.getcwd()
        print("sandbox:", sandbox.apply([work, "/dev", "/dev/shm", f"/proc/{{os.getpid()}}"]))
    problem = load_selected("full", patterns=[{pattern!r}])[0]
    env = ReferenceEnv(problem, "cuda", "fp32", secret=1)
    compiled = torch.compile(env.model)
    started = time.perf_counter()
    try:
        with torch.no_grad():
            compiled(*env.make_inputs(1))
        torch.cuda.synchronize()
        print(f"ok: compiled and ran in {{time.perf_counter() - started:.1f}} s")
    except Exception as error:
        text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        print(f"FAILED after {{time.perf_counter() - started:.1f}} s:", type(error).__name__)
        print(text[-2500:])
""")


def left_running(before: set[int]) -> list[str]:
    rows = subprocess.run(["ps", "-eo", "pid,ppid,stat,etimes,args"], capture_output=True, text=True).stdout
    out = []
    for line in rows.splitlines()[1:]:
        pid = int(line.split()[0])
        if pid not in before and "compile_worker" in line:
            out.append(line.strip()[:160])
    return out


def pids() -> set[int]:
    return {int(p) for p in os.listdir("/proc") if p.isdigit()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problem", default="L3/19_*")
    parser.add_argument("--only", action="append", help="run only these conditions")
    args = parser.parse_args()
    conditions = [("plain", False, False, False), ("scrubbed", True, False, False),
                  ("sandboxed", True, True, False), ("one-thread", True, True, True)]
    for name, scrubbed, sandboxed, one_thread in conditions:
        if args.only and name not in args.only:
            continue
        work = tempfile.mkdtemp(prefix=f"probe-{name}-")
        env = dict(os.environ)
        if scrubbed:
            env = {k: v for k, v in os.environ.items() if k in ("PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES")}
            env.update(HOME=work, TMPDIR=work, TRITON_CACHE_DIR=f"{work}/triton-cache",
                       TORCHINDUCTOR_CACHE_DIR=f"{work}/inductor", PYTHONPATH=str(ROOT))
        if one_thread:
            env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
        before = pids()
        source = CHILD.format(root=str(ROOT), sandboxed=sandboxed, pattern=args.problem)
        done = subprocess.run([sys.executable, "-c", source], cwd=work, env=env, capture_output=True, text=True,
                              timeout=400)
        lines = [l for l in (done.stdout + done.stderr).splitlines() if "UserWarning" not in l and "warnings.warn" not in l]
        print(f"=== {name} (exit {done.returncode})")
        print("\n".join(lines[-40:]))
        leftovers = left_running(before)
        print(f"compile_worker processes still running after it exited: {len(leftovers)}")
        for row in leftovers[:4]:
            print("  ", row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
