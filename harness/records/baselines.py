"""Per-device baseline files: eager and torch.compile medians of every problem, from run records.

``python -m harness.records.baselines --runs DIR [DIR ...] --out results/baselines/<device>.json`` collects
the baselines the harness measured (same protocol as candidates) and prints a per-level summary:
problems correct, median eager ms, median SOL fraction of eager, geomean of eager/compile, and how
many problems' reference speedup (the same source timed twice) fell outside 0.9-1.1. A problem
whose compile baseline failed keeps the reason (``compile_failed``), and the file's eager medians are
counted by the CUDA timer that measured them.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

from harness.records.results import load_records

COMPILE_FAILED = "compile_baseline_failed:"  # the remark evaluate.py gives a record whose compile baseline failed


def collect(records: list[dict]) -> dict:
    problems = {}
    for record in records:
        if record.get("suite") != "kernelbench" or record.get("generator") != "reference":
            continue
        entry = problems.setdefault(record["problem_id"], {"level": record.get("level")})
        entry["correct"] = bool(entry.get("correct") or record.get("correct"))
        for key in ("eager_ms", "eager_ms_iqr", "compile_ms", "compile_ms_iqr", "sol_ms", "flops", "bytes"):
            if record.get(key) is not None:
                entry[key] = record[key]
        entry.update(size=record.get("size"), precision=record.get("precision"), device=record.get("hardware"))
        if record.get("eager_ms") is not None:
            entry["timer"] = record.get("run_timer")  # the CUDA window the eager median was measured with
            # The reference generator's candidate is the eager source itself, timed in its own session
            # just before the eager baseline: outside 0.9-1.1 one of the two was disturbed, so the
            # problem's eager median is not settled (UNSETTLED below).
            entry["reference_speedup"] = record.get("speedup")
        failed = [r for r in record.get("remarks") or [] if str(r).startswith(COMPILE_FAILED)]
        if failed:
            entry["compile_failed"] = failed[-1][len(COMPILE_FAILED):].strip()
    for entry in problems.values():
        if entry.get("compile_ms") is not None:
            entry.pop("compile_failed", None)  # measured in some run: the failure was not the last word
    return dict(sorted(problems.items()))


def level_lines(problems: dict) -> list[str]:
    by_level = defaultdict(list)
    for entry in problems.values():
        by_level[entry["level"]].append(entry)
    lines = ["level | problems | correct | median eager ms | median SOL fraction of eager | geomean eager/compile | "
             "reference speedup outside 0.9-1.1"]
    for level in sorted(by_level, key=lambda v: (v is None, v)):
        rows = by_level[level]
        eager = [r["eager_ms"] for r in rows if r.get("eager_ms")]
        sol = [r["sol_ms"] / r["eager_ms"] for r in rows if r.get("sol_ms") and r.get("eager_ms")]
        ratios = [r["eager_ms"] / r["compile_ms"] for r in rows if r.get("eager_ms") and r.get("compile_ms")]
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
        lines.append(f"L{level} | {len(rows)} | {sum(r['correct'] for r in rows)} | "
                     f"{statistics.median(eager) if eager else float('nan'):.4f} | "
                     f"{statistics.median(sol) if sol else float('nan'):.4f} | "
                     f"{geo if geo else float('nan'):.4f} ({len(ratios)} with compile) | "
                     f"{sum(unsettled(r) for r in rows)}")
    return lines


SETTLED_BAND = (0.9, 1.1)


def unsettled(entry: dict) -> bool:
    speedup = entry.get("reference_speedup")
    return speedup is not None and not SETTLED_BAND[0] <= speedup <= SETTLED_BAND[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.records.baselines", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", nargs="+", required=True, help="run files or folders with reference runs")
    parser.add_argument("--out", required=True, help="baseline file to write (JSON)")
    args = parser.parse_args(argv)
    problems = collect(load_records(args.runs))
    devices = sorted({p.get("device") or "?" for p in problems.values()})
    body = {"schema": "crucible.baselines/1.0", "devices": devices, "problems": problems}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(body, indent=1, sort_keys=True) + "\n")
    print("\n".join(level_lines(problems)))
    shaky = [f"{pid} {entry['reference_speedup']:.3f}" for pid, entry in problems.items() if unsettled(entry)]
    if shaky:
        print(f"reference speedup outside {SETTLED_BAND[0]}-{SETTLED_BAND[1]} (eager median not settled): " + ", ".join(shaky))
    failed = [f"{pid} ({entry['compile_failed'][:60]})" for pid, entry in problems.items() if entry.get("compile_failed")]
    if failed:
        print("compile baseline failed: " + "; ".join(failed))
    timers = Counter(entry["timer"] or "unnamed" for entry in problems.values() if "timer" in entry)
    if timers:
        print("eager medians by CUDA timer: " + ", ".join(f"{name} {n}" for name, n in sorted(timers.items())))
    print(f"{len(problems)} problems -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
