"""GPU checks of the core harness, in one run (prints a short table last).

1. The starter set at full size with `reference` and `inductor` (records under --out).
2. `reference` speedups (should be within 0.9-1.1).
3. The same candidate timed twice: relative difference of medians, median over problems.
4. Eager medians against triton.testing.do_bench (with its L2 flush), same problems.

Usage: python bench/gpu_core.py --out DIR [--subset starter] [--size full]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def run_generator(name, problems, opts, out_dir, log):
    from harness.executors.runner import Runner

    runner = Runner(name, opts, out_dir, suite="kernelbench")
    records = {}
    for problem in problems:
        t0 = time.perf_counter()
        record = runner.run_problem(problem)[0]
        records[problem.id] = record
        log(f"{name:9s} {problem.id:45s} {record['status']:13s} cand {record['candidate_ms'] or 0:9.4f} ms "
            f"eager {record['eager_ms'] or 0:9.4f} compile {record['compile_ms'] or 0:9.4f} "
            f"speedup {record['speedup'] or 0:6.3f} flags {record['flags']} ({time.perf_counter() - t0:.0f}s) {record['reason'][:120]}")
    return records, runner


def do_bench_eager(problem, precision="fp32"):
    import torch
    import triton.testing

    from harness.judge.reference import ReferenceEnv

    env = ReferenceEnv(problem, "cuda", precision, secret=1)
    inputs = env.make_inputs(123)
    with torch.no_grad():
        ms = triton.testing.do_bench(lambda: env.model(*inputs), warmup=50, rep=300, return_mode="median")
    del env, inputs
    torch.cuda.empty_cache()
    return ms


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--subset", default="starter")
    parser.add_argument("--size", default="full")
    parser.add_argument("--generators", default="reference,inductor")
    parser.add_argument("--budget-ms", type=float, default=1000.0)
    parser.add_argument("--problem", action="append", default=None, help="globs, as --problem elsewhere")
    args = parser.parse_args()
    from harness.judge.eval_setup import eval_options
    from harness.problems.suite import load_selected

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log_file = open(out / "gpu_core.log", "a")

    def log(text):
        print(text, flush=True)
        log_file.write(text + "\n")
        log_file.flush()

    problems = load_selected(args.size, levels=(1, 2, 3), subset=args.subset, patterns=args.problem)
    opts = eval_options(device="cuda", size=args.size, timing_budget_ms=args.budget_ms, compile_baseline="on")
    results = {}
    for name in args.generators.split(","):
        results[name], _ = run_generator(name, problems, opts, out, log)
    again, _ = run_generator("reference", problems, opts, out, log)
    rows = []
    for problem in problems:
        ref = results.get("reference", {}).get(problem.id, {})
        ind = results.get("inductor", {}).get(problem.id, {})
        rep = again.get(problem.id, {})
        bench = do_bench_eager(problem)
        rows.append({"problem": problem.id, "ref_status": ref.get("status"), "ref_speedup": ref.get("speedup"),
                     "ind_status": ind.get("status"), "ind_speedup": ind.get("speedup"),
                     "eager_ms": ref.get("eager_ms"), "do_bench_ms": bench, "cand_ms": ref.get("candidate_ms"),
                     "cand_ms_again": rep.get("candidate_ms")})
    (out / "gpu_core.json").write_text(json.dumps(rows, indent=1))
    log("\nproblem                                        ref   ref_x  ind   ind_x   eager_ms  do_bench  rel_diff  repeat_diff")
    diffs, repeats, in_band = [], [], 0
    for row in rows:
        rel = abs(row["eager_ms"] - row["do_bench_ms"]) / row["do_bench_ms"] if row["eager_ms"] else None
        rep = abs(row["cand_ms"] - row["cand_ms_again"]) / row["cand_ms"] if row["cand_ms"] and row["cand_ms_again"] else None
        diffs += [rel] if rel is not None else []
        repeats += [rep] if rep is not None else []
        in_band += bool(row["ref_speedup"] and 0.9 <= row["ref_speedup"] <= 1.1)
        fmt = lambda v, f="{:.3f}": f.format(v) if isinstance(v, (int, float)) else "-"  # noqa: E731
        log(f"{row['problem']:45s} {str(row['ref_status'])[:4]:5s} {fmt(row['ref_speedup'])} {str(row['ind_status'])[:4]:5s} "
            f"{fmt(row['ind_speedup'])} {fmt(row['eager_ms'], '{:9.4f}')} {fmt(row['do_bench_ms'], '{:9.4f}')} "
            f"{fmt(rel)} {fmt(rep)}")
    log(f"reference speedups within 0.9-1.1: {in_band}/{len(rows)}")
    if diffs:
        log(f"eager vs do_bench: median relative difference {statistics.median(diffs):.4f} (max {max(diffs):.4f})")
    if repeats:
        log(f"same candidate timed twice: median relative difference {statistics.median(repeats):.4f} (max {max(repeats):.4f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
