"""MKEvolve against direct and kforge on a GPU at full size, at an equal per-problem token budget.

Usage (on the GPU machine; every flag optional):
    python bench/mkevolve_compare.py --level 2 --max-minutes 9 --out "$OUT"
    python bench/mkevolve_compare.py --level 3 --max-minutes 9 --out "$OUT"

Problems run one at a time, every generator on each, until ``--max-minutes`` would be passed (a
problem is not started after that), so one call fits a command-length limit; the tables cover the
problems that finished. Printed: the comparison table (correctness, geomean speedup over eager,
tokens per problem and per correct kernel, wall time), then MKEvolve's per-unit view (each unit's
operations, status, its kernel's measured time and speedup over the unit's own eager reference,
tokens) and its merge decisions (measured on the GPU). Writes ``mkevolve_compare_L<level>.json``
and the run files to ``--out``. torch.compile's baseline is off by default (it costs minutes per
problem); pass ``--compile-baseline on`` to include it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    args = parse()
    from harness.candidate import Budget
    from harness.compare_cli import format_table, summarize
    from harness.judge.eval_setup import eval_options
    from harness.executors.runner import Runner
    from harness.problems.suite import load_selected

    opts = eval_options(device=args.device, size=args.size, compile_baseline=args.compile_baseline,
                        timing_budget_ms=args.timing_budget_ms)
    problems = load_selected(args.size, levels=(args.level,), subset=args.subset, patterns=args.problem)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = [name.strip() for name in args.generators.split(",") if name.strip()]
    runners = {name: Runner(name, opts, out / "runs", generator_options={"provider": args.provider},
                            budget=Budget(max_tokens=args.token_budget), log=lambda line: print(line, file=sys.stderr))
               for name in names}
    results = {name: {"records": [], "seconds": {}, "run_file": str(runner.path)} for name, runner in runners.items()}
    deadline = time.monotonic() + 60 * args.max_minutes
    done = []
    for problem in problems:
        if time.monotonic() > deadline:
            print(f"time budget spent: {len(problems) - len(done)} problem(s) not started", file=sys.stderr)
            break
        for name, runner in runners.items():
            began = time.perf_counter()
            results[name]["records"] += runner.run_problem(problem)
            results[name]["seconds"][problem.id] = time.perf_counter() - began
            print(f"{problem.id} {name}: {results[name]['records'][-1]['status']} "
                  f"{time.perf_counter() - began:.0f} s", file=sys.stderr, flush=True)
        done.append(problem)
    if not done:
        print("no problem finished")
        return 1
    summary = summarize(results, done)
    context = f"{args.size} size, {opts.device}, provider {args.provider}, token budget {args.token_budget:,} per problem"
    print("\n".join(format_table(summary, context)))
    print("\n".join(unit_table(results.get("mkevolve", {}).get("records", []))))
    report = {"context": context, "summary": summary, "units": unit_rows(results.get("mkevolve", {}).get("records", []))}
    (out / f"mkevolve_compare_L{args.level}.json").write_text(json.dumps(report, indent=1, default=str))
    return 0


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--level", type=int, default=2)
    parser.add_argument("--generators", default="mkevolve,direct,kforge")
    parser.add_argument("--token-budget", type=int, default=40_000)
    parser.add_argument("--subset", default="representative")
    parser.add_argument("--problem", action="append", default=None, help="glob over problem ids (repeatable)")
    parser.add_argument("--size", default="full")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--provider", default="builtin")
    parser.add_argument("--compile-baseline", default="off")
    parser.add_argument("--timing-budget-ms", type=float, default=None)
    parser.add_argument("--max-minutes", type=float, default=9.0)
    parser.add_argument("--out", default=os.environ.get("OUT", "/tmp/mkevolve_compare"))
    return parser.parse_args()


def unit_rows(records: list[dict]) -> list[dict]:
    rows = []
    for record in records:
        provenance = record.get("provenance") or {}
        for unit in provenance.get("submodules") or []:
            rows.append({"problem": record["problem_id"], "correct": record.get("correct"),
                         "speedup": record.get("speedup"), "decomposition": provenance.get("decomposition"), **unit})
        for merge in provenance.get("merges") or []:
            rows.append({"problem": record["problem_id"], "merge": merge})
    return rows


def unit_table(records: list[dict]) -> list[str]:
    lines = ["", "MKEvolve per unit (ms and speedup: the unit's kernel against the unit's own eager reference)",
             f"{'problem':<44} {'unit':<5} {'status':<8} {'ms':>9} {'speedup':>8} {'tokens':>7}  ops"]
    for row in unit_rows(records):
        if "merge" in row:
            merge = row["merge"]
            verdict = "kept" if merge.get("kept") else "tried, rejected" if merge.get("tried") else "not tried"
            lines.append(f"{row['problem']:<44} merge {'+'.join(merge['units'])}: {verdict}; {merge.get('policy')}"
                         f"{'; ' + merge['outcome'] if merge.get('outcome') else ''}")
            continue
        ms = f"{row['ms']:.4g}" if row.get("ms") else "-"
        speedup = f"{row['speedup']:.2f}" if row.get("speedup") else "-"
        lines.append(f"{row['problem']:<44} {row['name']:<5} {row['status']:<8} {ms:>9} {speedup:>8} "
                     f"{row['tokens']:>7}  {', '.join(row['ops'])[:60]}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
