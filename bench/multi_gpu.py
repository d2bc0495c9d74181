"""Several pytest-xdist workers on the GPUs of one host: scaling, exclusive timing, one run file.

Usage: python bench/multi_gpu.py --out DIR [--workers 1,2] [--subset starter] [--size full]
For each worker count it runs `pytest suites/kernelbench --device cuda -n W` and then checks, from
the run file: one file holds every record; per GPU, no two evaluations' device windows overlap
(timings never share a GPU); the wall time. With two or more GPUs it also compares the candidate
medians of the same problems measured on different GPUs (median relative difference).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def overlaps(records: list[dict]) -> int:
    count = 0
    by_gpu = defaultdict(list)
    for record in records:
        by_gpu[record.get("gpu_index")].extend(record.get("gpu_windows") or [])
    for windows in by_gpu.values():
        windows.sort()
        count += sum(1 for a, b in zip(windows, windows[1:]) if b[0] < a[1] - 1e-3)
    return count


def run(workers: int, args, out: Path) -> dict:
    runs = out / f"runs_n{workers}"
    command = [sys.executable, "-m", "pytest", str(ROOT / "suites" / "kernelbench"), "-q", "-p", "no:cacheprovider",
               "--device", "cuda", "--size", args.size, "--subset", args.subset, "--runs-dir", str(runs),
               "--generator", "reference", "--timing-budget-ms", str(args.budget_ms), "--compile-baseline", "off"]
    for pattern in args.problem or []:
        command += ["--problem", pattern]
    if workers > 1:
        command += ["-n", str(workers)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - started
    files = sorted(runs.glob("*.jsonl"))
    records = [json.loads(line) for f in files for line in f.read_text().splitlines()]
    records = [r for r in records if r.get("type") == "record"]
    return {"workers": workers, "wall_s": wall, "files": len(files), "records": len(records),
            "gpus": sorted({r.get("gpu_index") for r in records}, key=str), "overlaps": overlaps(records),
            "records_list": records, "tail": done.stdout[-600:]}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--subset", default="starter")
    parser.add_argument("--size", default="full")
    parser.add_argument("--budget-ms", type=float, default=500)
    parser.add_argument("--problem", action="append", default=None, help="globs, as --problem elsewhere")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = [run(int(w), args, out) for w in args.workers.split(",")]
    print("workers | wall s | run files | records | GPUs used | overlapping timing windows on one GPU")
    for r in results:
        print(f"{r['workers']:7d} | {r['wall_s']:6.0f} | {r['files']:9d} | {r['records']:7d} | {r['gpus']} | {r['overlaps']}")
    base = results[0]["wall_s"]
    for r in results[1:]:
        print(f"scaling with {r['workers']} workers: {base / r['wall_s']:.2f}x")
    pairs = defaultdict(dict)
    for r in results:
        for rec in r["records_list"]:
            if rec.get("candidate_ms"):
                pairs[rec["problem_id"]][rec.get("gpu_index")] = rec["candidate_ms"]
    cross = [abs(v[a] - v[b]) / v[a] for v in pairs.values() for a in v for b in v if a is not None and b is not None and a < b]
    if cross:
        print(f"same problems on two GPUs: median relative difference {statistics.median(cross):.4f} over {len(cross)} pairs")
    else:
        print("same problems on two GPUs: not measured (fewer than two GPUs used)")
    for r in results:
        print(r["tail"][-300:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
