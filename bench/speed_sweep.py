"""The identical-code sweep: `reference` (the problem's own Model as the candidate) over the suite,
and what its records say about the timer.

    python bench/speed_sweep.py run --device cuda --size full --runs-dir DIR [--level 3] [--problem GLOB]
        [--subset sample50] [--compile] [--limit-s 540]    # resumable: run it again with the same DIR
    python bench/speed_sweep.py report RUNFILE [RUNFILE2]

``run`` exits 3 when it stopped at ``--limit-s`` with problems left (gpu_verify runs such a stage
again on its next call). ``report`` prints, per level: problems timed, speedups within 0.97-1.03 and 0.95-1.05, the
verdict counts (a correct timer calls identical code ``indistinguishable``), the worst problems,
wall time, and the fixed cost of an evaluation (its wall time less its timing phase). With a second
run file (the same sweep repeated on the same machine) it also prints how far the two runs' speedups
are apart: the median and 95th percentile of |log(s1/s2)|, as percentages.
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
UNFINISHED = 3      # the exit status of a run stopped at its time limit: run it again to go on


def run(args) -> int:
    command = [sys.executable, "-m", "harness", "run", "--generator", "reference", "--device", args.device,
               "--size", args.size, "--runs-dir", args.runs_dir, "--resume"]
    for level in args.level or []:
        command += ["--level", level]
    for pattern in args.problem or []:
        command += ["--problem", pattern]
    if args.subset:
        command += ["--subset", args.subset]
    # Explicit both ways: the harness's default (auto) times the compile baseline on CUDA.
    command += ["--compile-baseline", "on" if args.compile else "off"]
    started = time.perf_counter()
    try:
        code = subprocess.run(command, cwd=ROOT, timeout=args.limit_s).returncode
    except subprocess.TimeoutExpired:
        print(f"stopped at the {args.limit_s:g} s limit; run the same command again to go on (--resume)")
        code = UNFINISHED
    print(f"wall {time.perf_counter() - started:.1f} s for this part")
    newest = sorted(Path(args.runs_dir).glob("*.jsonl"))
    if newest:
        report_files([newest[-1]])
    return code


def _records(path: Path) -> list[dict]:
    from harness.records.results import load_records

    return [r for r in load_records([path]) if r.get("generator") == "reference"]


def report_files(paths: list[Path]) -> None:
    runs = [_records(p) for p in paths]
    first = runs[0]
    print(f"\n{paths[0]}: {len(first)} records")
    print(f"{'level':>5} {'timed':>5} {'0.97-1.03':>9} {'0.95-1.05':>9} {'faster':>6} {'slower':>6} {'indist':>6} "
          f"{'median|d|':>9} {'fixed s':>7} {'wall s':>7}")
    for level in sorted({r.get("level") for r in first}, key=str):
        rows = [r for r in first if r.get("level") == level]
        timed = [r for r in rows if r.get("speedup")]
        near = sum(0.97 <= r["speedup"] <= 1.03 for r in timed)
        close = sum(0.95 <= r["speedup"] <= 1.05 for r in timed)
        verdicts = [r.get("speed_verdict") for r in timed]
        spread = median(abs(r["speedup"] - 1) for r in timed) if timed else float("nan")
        fixed = [r["elapsed_s"] - _timing_s(r) for r in rows if r.get("elapsed_s") is not None]
        print(f"{level!s:>5} {len(timed):>5} {near:>9} {close:>9} {verdicts.count('faster'):>6} "
              f"{verdicts.count('slower'):>6} {verdicts.count('indistinguishable'):>6} {100 * spread:>8.2f}% "
              f"{median(fixed) if fixed else float('nan'):>7.2f} {sum(r.get('elapsed_s') or 0 for r in rows):>7.0f}")
    worst = sorted((r for r in first if r.get("speedup")), key=lambda r: -abs(math.log(r["speedup"])))[:8]
    print("worst: " + ", ".join(f"{r['problem_id']} {r['speedup']:.3f} [{_ci(r.get('speedup_ci'))}]" for r in worst))
    controlled = [r for r in first if r.get("control_ratio")]
    if controlled:
        biased = [r for r in controlled if any(m.startswith("process_bias") for m in r.get("remarks", []))]
        print(f"A/A control (two eager workers): {len(controlled)} problems, median |ratio-1| "
              f"{100 * median(abs(r['control_ratio'] - 1) for r in controlled):.2f}%, interval excludes 1 on "
              f"{len(biased)}: " + ", ".join(f"{r['problem_id']} {r['control_ratio']:.3f} [{_ci(r['control_ratio_ci'])}]"
                                             for r in biased[:8]))
    print("per problem: " + "; ".join(f"{r['problem_id'].split('_')[0]} {r['speedup']:.3f} n={r.get('speedup_n')} "
                                      f"{r.get('speed_stop')} cand {r.get('candidate_ms', 0):.3g} ms"
                                      for r in first if r.get("speedup")))
    if len(runs) > 1:
        _compare(first, runs[1])


def _ci(interval) -> str:
    return "-".join(f"{v:.3f}" for v in interval) if interval else "n/a"


def _timing_s(record: dict) -> float:
    return float((record.get("phases_s") or {}).get("candidate", {}).get("timing", 0.0))


def _compare(first: list[dict], second: list[dict]) -> None:
    again = {r["problem_id"]: r.get("speedup") for r in second}
    apart = sorted(abs(math.log(r["speedup"] / again[r["problem_id"]])) for r in first
                   if r.get("speedup") and again.get(r["problem_id"]))
    if not apart:
        print("repeat: no problem timed in both runs")
        return
    p95 = apart[min(len(apart) - 1, int(0.95 * len(apart)))]
    print(f"repeat: {len(apart)} problems in both runs; |log(s1/s2)| median {100 * median(apart):.2f}%, "
          f"95th percentile {100 * p95:.2f}%, max {100 * apart[-1]:.2f}%")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    sweep = commands.add_parser("run", help="run (or resume) the reference sweep, then report")
    sweep.add_argument("--device", default="cuda")
    sweep.add_argument("--size", default="full")
    sweep.add_argument("--runs-dir", required=True)
    sweep.add_argument("--level", action="append")
    sweep.add_argument("--problem", action="append")
    sweep.add_argument("--subset", help="all (default), representative, starter or sample50 (the compile sample)")
    sweep.add_argument("--compile", action="store_true", help="time the compile baseline too (default: eager only)")
    sweep.add_argument("--limit-s", type=float, default=540.0, help="stop after this long (resume later)")
    report = commands.add_parser("report", help="summarise one run file, or compare two")
    report.add_argument("runfiles", nargs="+", type=Path)
    args = parser.parse_args(argv)
    if args.command == "run":
        return run(args)
    report_files(args.runfiles)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
