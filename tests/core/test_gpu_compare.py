"""bench/gpu_compare.py's summary lines, recomputed here from the committed GPU run files it reads.

The figures the closing notes quote for issue #2 (reference speedups in band, the same candidate
timed twice, inductor's correctness and geomean) come from this tool; without --do-bench it needs no
GPU, so its arithmetic is checked on the CPU against an independent computation from the records."""

from __future__ import annotations

import math
import statistics
import subprocess
import sys
from pathlib import Path

from harness.records.results import load_records

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "results" / "runs" / "h100" / "starter_repeat"


def latest_by_problem(*folders: Path) -> dict:
    return {r["problem_id"]: r for r in load_records([str(f) for f in folders])}


def test_summary_lines_match_the_records():
    first, second = latest_by_problem(RUNS / "ref1"), latest_by_problem(RUNS / "ref2")
    inductor = latest_by_problem(RUNS / "ind", RUNS / "ind2")
    shared = sorted(set(first) & set(second))
    assert len(shared) == 14

    in_band = sum(0.9 <= first[p]["speedup"] <= 1.1 for p in shared)
    repeats = [abs(first[p]["candidate_ms"] - second[p]["candidate_ms"]) / first[p]["candidate_ms"] for p in shared]
    ok = [inductor[p] for p in shared if inductor[p]["status"] == "ok"]
    geomean = math.exp(statistics.fmean(math.log(r["speedup"]) for r in ok))

    printed = subprocess.run(
        [sys.executable, "bench/gpu_compare.py", "--first", str(RUNS / "ref1"), "--second", str(RUNS / "ref2"),
         "--inductor", str(RUNS / "ind"), str(RUNS / "ind2")],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=True).stdout.splitlines()

    assert f"reference speedups within 0.9-1.1: {in_band}/14" in printed
    assert (f"same candidate timed twice: median relative difference {statistics.median(repeats):.4f}, "
            f"max {max(repeats):.4f} (14 problems)") in printed
    assert f"inductor: {len(ok)}/14 ok, geomean speedup over eager {geomean:.3f} ({len(ok)} timed)" in printed
    rows = [line for line in printed if line.startswith(("L1/", "L2/", "L3/"))]
    assert [row.split(" | ")[0] for row in rows] == shared
    for row in rows:
        pid, *_, inductor_speedup, _flags = row.split(" | ")
        assert inductor_speedup == f"{inductor[pid]['speedup']:.3f}"
