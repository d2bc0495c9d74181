"""GPU memory of judge and worker, request by request, on full-size problems (CUDA only).

    python bench/cuda_memory_trace.py --problem 'L1/36_*' --problem 'L1/19_*' [--generator reference]

Runs the generator through ``harness.executors.runner.Runner`` with ``CRUCIBLE_CUDA_MEMORY_TRACE`` set (see
harness/judge/memtrace.py), then prints per problem and phase the judge's largest reserved memory, the
largest any other process held (the worker) and the least free memory seen, and each record's
status. Use it when a full-size problem runs out of memory: the phase and the process that grew say
where to look.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problem", action="append", required=True, help="problem glob (repeatable)")
    parser.add_argument("--generator", default="reference")
    parser.add_argument("--size", default="full")
    parser.add_argument("--timing-budget-ms", type=float, default=500)
    parser.add_argument("--compile-baseline", default="off")
    parser.add_argument("--runs-dir", default=str(ROOT / "results" / "scratch" / "memtrace"))
    args = parser.parse_args()
    trace = Path(tempfile.mkdtemp()) / "trace.ndjson"
    os.environ["CRUCIBLE_CUDA_MEMORY_TRACE"] = str(trace)

    from harness.judge.eval_setup import eval_options
    from harness.executors.runner import Runner
    from harness.problems.suite import load_selected

    opts = eval_options(device="cuda", size=args.size, timing_budget_ms=args.timing_budget_ms,
                        compile_baseline=args.compile_baseline)
    runner = Runner(args.generator, opts, args.runs_dir, log=lambda text: print(text, file=sys.stderr))
    marks = []
    for problem in load_selected(args.size, patterns=args.problem):
        start = sum(1 for _ in open(trace)) if trace.exists() else 0
        records = runner.run_problem(problem)
        marks.append((problem.id, start, records))
    rows = [json.loads(line) for line in open(trace)] if trace.exists() else []
    print("problem | phase | judge reserved GiB (max) | other process GiB (max) | free GiB (min) | requests")
    for problem_id, start, records in marks:
        end = next((s for p, s, _ in marks if s > start), len(rows))
        phases = defaultdict(list)
        for row in rows[start:end]:
            phases[row.get("phase", "?")].append(row)
        for phase, items in phases.items():
            judge = max(r.get("judge_reserved_gib", 0) for r in items)
            other = max((max((v for k, v in r.get("processes_gib", {}).items() if k != str(r.get("judge_pid"))), default=0)
                         for r in items), default=0)
            free = min(r.get("free_gib", 0) for r in items)
            print(f"{problem_id} | {phase} | {judge:.1f} | {other:.1f} | {free:.1f} | {len(items)}")
        for record in records:
            print(f"{problem_id} | record | {record['status']} | {record.get('reason', '')[:160]}")
    _print_timed_calls(marks, rows)
    if rows:
        kept = Path(args.runs_dir) / "memory_trace.ndjson"
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_text("".join(json.dumps(row) + "\n" for row in rows))
        print(f"trace: {kept}")
    return 0


def _print_timed_calls(marks, rows) -> None:
    """Per timed worker (candidate, eager, compiled): how many timed calls allocated, how long the
    worker sat idle before each batch, and the median time of calls after short and long idles."""
    import statistics

    print("problem | worker | timed calls | calls with cudaMalloc | of them after an OOM retry | cudaFree calls | "
          "idle before batch ms (median) | median ms | median ms, allocating calls")
    for problem_id, start, _ in marks:
        end = next((s for p, s, _ in marks if s > start), len(rows))
        by_worker = defaultdict(list)
        for row in rows[start:end]:
            if row.get("op") == "time" and isinstance(row.get("times_ms"), list):
                by_worker[row.get("worker_pid")].append(row)
        for pid, batches in by_worker.items():
            times, alloc_times, idles, allocating, retried, frees = [], [], [], 0, 0, 0
            for row in batches:
                calls = len(row["times_ms"])
                allocs = row.get("device_allocs") or [0] * calls
                retries = row.get("alloc_retries") or [0] * calls
                frees += sum(n for n in row.get("device_frees") or [] if n > 0)
                idles.append(row.get("idle_before_ms", 0.0))
                for elapsed, count, retry in zip(row["times_ms"], allocs, retries):
                    times.append(elapsed)
                    if count:
                        allocating += 1
                        retried += retry > 0
                        alloc_times.append(elapsed)
            median = lambda values: f"{statistics.median(values):.4f}" if values else "-"
            print(f"{problem_id} | {pid} | {len(times)} | {allocating} | {retried} | {frees} | {median(idles)} | "
                  f"{median(times)} | {median(alloc_times)}")


if __name__ == "__main__":
    sys.exit(main())
