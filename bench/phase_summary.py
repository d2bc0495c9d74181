"""Where evaluations' wall time went: the median seconds of each phase of each session (the
records' ``phases_s``, docs/INTERFACES.md §5) over a run's records, and what of ``elapsed_s`` lies
outside every session.

    python bench/phase_summary.py --runs results/runs/h200/RUN.jsonl [--since 2026-12-03T00:00]
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from statistics import median

from harness.records.results import load_records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", nargs="+", required=True, help="run files or directories")
    parser.add_argument("--since", default="", help="only records whose ISO time is at least this")
    args = parser.parse_args(argv)
    records = [r for r in load_records(args.runs) if r.get("phases_s") and str(r.get("time", "")) >= args.since]
    if not records:
        print("no record with phases_s (older run files have none)")
        return 1
    seconds: dict[tuple[str, str], list[float]] = defaultdict(list)
    for record in records:
        spent = 0.0
        for session, laps in record["phases_s"].items():
            for phase, value in (laps.items() if isinstance(laps, dict) else [("", laps)]):
                seconds[(session, phase)].append(value)
                spent += value
        seconds[("(outside sessions)", "checks, speed of light, flags")].append(round(record["elapsed_s"] - spent, 3))
    elapsed = median(r["elapsed_s"] for r in records)
    print(f"{len(records)} records, median elapsed {elapsed:.2f} s")
    print("| session | phase | records | median s | total s |")
    print("| --- | --- | --- | --- | --- |")
    for (session, phase), values in sorted(seconds.items(), key=lambda item: -sum(item[1])):
        print(f"| {session} | {phase} | {len(values)} | {median(values):.2f} | {sum(values):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
