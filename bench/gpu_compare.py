"""Read reference and inductor run files measured on a GPU and print the core checks.

Usage: python bench/gpu_compare.py --first DIR --second DIR [--inductor PATH ...] [--do-bench]
- reference speedups (eager / reference-as-candidate; should be 0.9-1.1);
- the same candidate timed twice (two reference runs): median relative difference of medians;
- eager medians against triton.testing.do_bench with its L2 flush (--do-bench, needs the GPU);
- inductor speedups over eager.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def by_problem(*paths: str) -> dict:
    from harness.records.results import load_records

    return {r["problem_id"]: r for r in load_records(paths)} if paths else {}


def do_bench_eager(problem_id: str, record: dict) -> float:
    """Eager time of the same problem by triton.testing.do_bench (its own L2 flush, median)."""
    import torch
    import triton.testing

    from harness.judge.reference import ReferenceEnv
    from harness.problems.suite import load_selected

    level, stem = problem_id.split("/", 1)
    problem = load_selected(record.get("size", "full"), levels=(int(level[1:]),), patterns=[problem_id])[0]
    env = ReferenceEnv(problem, "cuda", record.get("precision", "fp32"), secret=1)
    inputs = env.make_inputs(123)
    with torch.no_grad():
        ms = triton.testing.do_bench(lambda: env.model(*inputs), warmup=50, rep=300, return_mode="median")
    del env, inputs
    torch.cuda.empty_cache()
    return ms


def fmt(value, pattern="{:.3f}"):
    return pattern.format(value) if isinstance(value, (int, float)) else "-"


def main() -> int:
    from harness.records import metrics

    parser = argparse.ArgumentParser()
    parser.add_argument("--first", required=True)
    parser.add_argument("--second", required=True)
    parser.add_argument("--inductor", nargs="+", default=[],
                        help="inductor run files or folders (a later file's record of a problem wins)")
    parser.add_argument("--do-bench", action="store_true")
    args = parser.parse_args()
    first, second, inductor = by_problem(args.first), by_problem(args.second), by_problem(*args.inductor)
    shared = sorted(set(first) & set(second))
    bench = {}
    if args.do_bench:
        bench = {pid: do_bench_eager(pid, first[pid]) for pid in shared}
    print("problem | ref status | ref speedup | eager ms | do_bench ms | eager/do_bench-1 | repeat diff | inductor speedup | flags")
    repeats, diffs, in_band = [], [], 0
    for pid in shared:
        a, b, ind = first[pid], second[pid], inductor.get(pid, {})
        rep = abs(a["candidate_ms"] - b["candidate_ms"]) / a["candidate_ms"] if a.get("candidate_ms") and b.get("candidate_ms") else None
        repeats += [rep] if rep is not None else []
        ref_x = a.get("speedup")
        in_band += bool(ref_x and 0.9 <= ref_x <= 1.1)
        db = bench.get(pid)
        diff = (a["eager_ms"] / db - 1) if db and a.get("eager_ms") else None
        diffs += [abs(diff)] if diff is not None else []
        print(f"{pid} | {a['status']} | {fmt(ref_x)} | {fmt(a.get('eager_ms'), '{:.4f}')} | {fmt(db, '{:.4f}')} | "
              f"{fmt(diff)} | {fmt(rep)} | {fmt(ind.get('speedup'))} | {','.join(a.get('flags') or []) or '-'}")
    print(f"reference speedups within 0.9-1.1: {in_band}/{len(shared)}")
    if repeats:
        print(f"same candidate timed twice: median relative difference {statistics.median(repeats):.4f}, max {max(repeats):.4f} ({len(repeats)} problems)")
    if inductor:
        ok = [inductor[pid] for pid in shared if inductor.get(pid, {}).get("status") == "ok"]
        speedups = [r["speedup"] for r in ok if r.get("speedup")]
        geomean = metrics.geomean(speedups)
        print(f"inductor: {len(ok)}/{len(shared)} ok, geomean speedup over eager {fmt(geomean)} ({len(speedups)} timed)")
    if diffs:
        print(f"eager vs do_bench: median |relative difference| {statistics.median(diffs):.4f}, max {max(diffs):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
