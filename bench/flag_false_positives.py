"""False positives of the integrity flags: honest generators over the shipped suite.

The ``reference`` generator (the problem's own Model) and ``inductor`` (torch.compile of it) are
honest by construction, so every flag on one of their records is a false positive. This runs each
through ``harness.executors.runner.Runner`` exactly as ``python -m harness run`` does and prints, per
generator: records, statuses, flagged records and a histogram of flags.

    python bench/flag_false_positives.py                                   # reference: all; inductor: representative
    python bench/flag_false_positives.py --inductor-subset starter --device cuda
    python bench/flag_false_positives.py --runs results/runs/<file>.jsonl  # count an existing run file

On the CPU, inductor compiles C++ for every problem (minutes each); use a subset there.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    parser.add_argument("--levels", default="1,2,3", help="levels (default: 1,2,3)")
    parser.add_argument("--reference-subset", default="all", help="subset for reference (default: all)")
    parser.add_argument("--inductor-subset", default="representative", help="subset for inductor (default: representative)")
    parser.add_argument("--generators", default="reference,inductor", help="which generators (default: both)")
    parser.add_argument("--timing-budget-ms", type=float, default=None, help="per timing phase (default: harness default)")
    parser.add_argument("--runs-dir", default=str(ROOT / "results" / "scratch" / "fp_runs"), help="where run files go")
    parser.add_argument("--runs", nargs="*", default=None, help="count these existing run files instead of running")
    return parser.parse_args(argv)


def run_generator(name: str, subset: str, args) -> tuple[list[dict], float, Path]:
    from harness.judge.eval_setup import eval_options
    from harness.records.progress import Progress
    from harness.executors.runner import Runner
    from harness.problems.suite import load_selected, parse_levels

    opts = eval_options(device=args.device, timing_budget_ms=args.timing_budget_ms)
    problems = load_selected("small", levels=parse_levels(args.levels), subset=subset)
    runner = Runner(name, opts, args.runs_dir, log=lambda text: print(text, file=sys.stderr))
    progress, records, started = Progress(len(problems)), [], time.perf_counter()
    for problem in problems:
        new = runner.run_problem(problem)
        records += new
        progress.done(problem.id, new)
    return records, time.perf_counter() - started, runner.path


def read_records(path: Path) -> list[dict]:
    with open(path) as handle:
        return [row for row in map(json.loads, handle) if row.get("type") == "record"]


def summarise(name: str, records: list[dict], seconds: float | None, where: Path) -> dict:
    flagged = [r for r in records if r.get("flags")]
    summary = {"generator": name, "records": len(records), "flagged": len(flagged),
               "statuses": dict(Counter(r["status"] for r in records)),
               "flags": dict(Counter(flag for r in flagged for flag in r["flags"])),
               "flagged_problems": [f"{r['problem_id']}: {','.join(r['flags'])}" for r in flagged],
               "seconds": round(seconds, 1) if seconds is not None else None, "run_file": str(where)}
    print(f"\n== {name}: {summary['records']} records, {summary['flagged']} flagged "
          f"(false-positive rate {summary['flagged'] / max(1, summary['records']):.1%})"
          + (f", {seconds:.0f} s" if seconds is not None else ""))
    print(f"   statuses: {summary['statuses']}")
    print(f"   flags:    {summary['flags'] or 'none'}")
    for line in summary["flagged_problems"]:
        print(f"   - {line}")
    not_ok = [f"{r['problem_id']}: {r['status']}: {r.get('reason', '')[:120]}" for r in records if r["status"] != "ok"]
    for line in not_ok:
        print(f"   ! {line}")
    return summary


def main(argv=None) -> int:
    args = parse_args(argv)
    summaries = []
    if args.runs:
        for path in map(Path, args.runs):
            records = read_records(path)
            summaries.append(summarise(records[0]["generator"] if records else path.name, records, None, path))
    else:
        subsets = {"reference": args.reference_subset, "inductor": args.inductor_subset}
        for name in args.generators.split(","):
            records, seconds, path = run_generator(name, subsets.get(name, "all"), args)
            summaries.append(summarise(name, records, seconds, path))
    print(json.dumps(summaries))
    return 1 if any(s["flagged"] for s in summaries) else 0


if __name__ == "__main__":
    sys.exit(main())
