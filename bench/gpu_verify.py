"""The GPU verification: the GPU-marked tests and the benchmarks, as a list of stages, in one command.

    python bench/gpu_verify.py --out DIR [--budget-s 540] [--only NAME ...] [--redo NAME ...]

Each stage is a command with its own time limit; its output goes to DIR/<stage>.log and its outcome
to DIR/stages.json as soon as it ends, so a second call with the same DIR skips the stages that
finished (passed or failed) and goes on with the rest (a sweep stopped at its limit is
"unfinished" and goes on where it stopped): a GPU lent for ten minutes at a time can
finish the list over several calls. A stage that would not fit the time left is not started. One
table is printed last. Without a CUDA GPU it says so and exits 0, having run nothing.

To verify something new on the GPU, add a Stage to STAGES (a name, the command, a time limit).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Stage:
    name: str
    command: tuple[str, ...]  # {python}, {out} and {limit} (seconds this stage may run, less a margin) are filled in
    limit_s: float            # the most it may take; it is not started with less time left than min_s
    min_s: float = 60.0
    min_gpus: int = 1
    env: tuple[tuple[str, str], ...] = ()   # extra environment for this stage's command


# The problems whose `reference` speedup moved most between runs under the previous timer
# (multi-kernel, launch-bound and cuDNN-RNN models): timed with the A/A control (two eager workers)
# to tell drift that follows the clock from drift that follows the process.
UNSTABLE = ("L3/9_*", "L3/10_*", "L3/15_*", "L3/23_*", "L3/36_*", "L3/38_*", "L3/41_*", "L1/12_*", "L1/71_*",
            "L2/23_*", "L1/95_*")
_UNSTABLE_ARGS = tuple(arg for pattern in UNSTABLE for arg in ("--problem", pattern))

STAGES = (
    Stage("timing-unstable", ("{python}", "bench/speed_sweep.py", "run", "--device", "cuda", "--size", "full",
                              "--runs-dir", "{out}/runs/timing-unstable", "--limit-s", "240") + _UNSTABLE_ARGS,
          300, 120, env=(("CRUCIBLE_TIMING_CONTROL", "1"),)),
    Stage("timing-unstable-unpinned", ("{python}", "bench/speed_sweep.py", "run", "--device", "cuda", "--size", "full",
                                       "--runs-dir", "{out}/runs/timing-unpinned", "--limit-s", "240") + _UNSTABLE_ARGS,
          300, 120, env=(("CRUCIBLE_TIMING_CONTROL", "1"), ("CRUCIBLE_TIMING_CPUS", "all"))),
    # the GPU tests include the exploit corpus's GPU cases (tests/exploits/test_corpus.py)
    Stage("gpu-tests", ("{python}", "-m", "pytest", "tests", "-m", "gpu", "-q", "-p", "no:cacheprovider",
                        "--runs-dir", "{out}/runs/gpu-tests"), 420, 120),
    Stage("harness-overhead", ("{python}", "bench/harness_overhead.py", "--device", "cuda", "--repeats", "3"), 120),
    Stage("gpu-core", ("{python}", "bench/gpu_core.py", "--out", "{out}/runs/gpu-core"), 540, 240),
    Stage("multi-gpu", ("{python}", "bench/multi_gpu.py", "--out", "{out}/runs/multi-gpu"), 420, 180, min_gpus=2),
    Stage("builtin-gpu", ("{python}", "bench/builtin_gpu.py", "suites/kernelbench/level1", "--budget-s", "300"), 360, 120),
    Stage("megakernel", ("{python}", "bench/megakernel_bench.py", "--skip-corpus"), 180),
    Stage("megakernel-gpu", ("{python}", "bench/megakernel_gpu.py", "--out", "{out}/megakernel_gpu.json"), 480, 180),
    # resumable by themselves: `--redo speed-sweep` with the same --out goes on where it stopped
    Stage("speed-sweep", ("{python}", "bench/speed_sweep.py", "run", "--device", "cuda", "--size", "full",
                          "--runs-dir", "{out}/runs/speed-sweep", "--limit-s", "{limit}"), 540, 180),
    # the same sweep again on the same machine: `speed_sweep.py report RUN RUN_REPEAT` compares them
    Stage("speed-sweep-repeat", ("{python}", "bench/speed_sweep.py", "run", "--device", "cuda", "--size", "full",
                                 "--runs-dir", "{out}/runs/speed-sweep-repeat", "--limit-s", "{limit}"), 540, 180),
    Stage("compile-sample", ("{python}", "bench/speed_sweep.py", "run", "--device", "cuda", "--size", "full",
                             "--subset", "sample50", "--compile", "--runs-dir", "{out}/runs/compile-sample",
                             "--limit-s", "{limit}"), 540, 180),
)
FINISHED = ("passed", "failed")
UNFINISHED = 3   # a resumable stage stopped at its limit (bench/speed_sweep.py): run again on the next call


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    gpus = _gpu_count()
    if gpus == 0:
        print("gpu_verify: no CUDA GPU is visible to this process (torch.cuda.is_available() is False); "
              "nothing was run. Run this on a machine with an NVIDIA GPU.")
        return 0
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    state = _load_state(out)
    deadline = time.monotonic() + args.budget_s
    for stage in _selected(args.only):
        if stage.name in args.redo:
            state.pop(stage.name, None)
        if state.get(stage.name, {}).get("status") in FINISHED:
            continue
        state[stage.name] = _outcome(stage, out, gpus, deadline)
        _save_state(out, state)
    _print_table(state, out)
    return 1 if any(entry.get("status") == "failed" for entry in state.values()) else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder for logs, run files and the stages' record")
    parser.add_argument("--budget-s", type=float, default=540.0, help="wall-clock budget of this call (default: 540)")
    parser.add_argument("--only", action="append", default=[], help="run only this stage (repeatable)")
    parser.add_argument("--redo", action="append", default=[], help="run this stage again even if it finished")
    return parser


def _selected(only: list[str]) -> list[Stage]:
    unknown = set(only) - {stage.name for stage in STAGES}
    if unknown:
        sys.exit(f"gpu_verify: unknown stage(s) {', '.join(sorted(unknown))}; stages: "
                 + ", ".join(stage.name for stage in STAGES))
    return [stage for stage in STAGES if not only or stage.name in only]


def _gpu_count() -> int:
    try:
        import torch
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def _outcome(stage: Stage, out: Path, gpus: int, deadline: float) -> dict:
    if gpus < stage.min_gpus:
        return {"status": "skipped", "why": f"needs {stage.min_gpus} GPUs, {gpus} visible"}
    left = deadline - time.monotonic()
    if left < stage.min_s:
        return {"status": "not started", "why": f"{left:.0f} s left, needs {stage.min_s:.0f} s"}
    limit = min(stage.limit_s, left)
    command = [part.format(python=sys.executable, out=out, limit=f"{max(30.0, limit - 30):.0f}") for part in stage.command]
    return _run(command, out / f"{stage.name}.log", limit, dict(stage.env))


def _run(command: list[str], log: Path, limit_s: float, extra_env: dict | None = None) -> dict:
    began = time.monotonic()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           **(extra_env or {})}
    with open(log, "w") as sink:
        sink.write("$ " + " ".join(command) + "\n")
        sink.flush()
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            rc = process.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # the stage's own process group, and nothing else
            process.wait()
            return {"status": "timed out", "seconds": round(time.monotonic() - began, 1), "log": log.name}
    status = "passed" if rc == 0 else "unfinished" if rc == UNFINISHED else "failed"
    return {"status": status, "rc": rc, "seconds": round(time.monotonic() - began, 1), "log": log.name}


def _load_state(out: Path) -> dict:
    path = out / "stages.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def _save_state(out: Path, state: dict) -> None:
    path = out / "stages.json"
    path.with_suffix(".tmp").write_text(json.dumps(state, indent=1))
    os.replace(path.with_suffix(".tmp"), path)


def _print_table(state: dict, out: Path) -> None:
    print(f"\nGPU verification ({out}):")
    print(f"{'stage':18s} {'status':12s} {'seconds':>8s}  detail")
    for stage in STAGES:
        entry = state.get(stage.name, {"status": "pending"})
        seconds = f"{entry['seconds']:.0f}" if "seconds" in entry else "-"
        detail = entry.get("why") or entry.get("log", "")
        print(f"{stage.name:18s} {entry['status']:12s} {seconds:>8s}  {detail}")


if __name__ == "__main__":
    sys.exit(main())
