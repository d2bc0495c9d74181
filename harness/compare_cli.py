"""``python -m harness compare``: several generators on the same problems at an equal token budget.

Every generator runs through ``harness.executors.runner.Runner`` (its own run file under ``--runs-dir``) with
the same per-problem token budget and the same LLM provider, and the closing table gives, per level
and generator: correctness (unflagged correct over all selected problems), the geometric-mean
speedup where speed was measured, mean tokens per problem and tokens per correct kernel (the
metrics of ``harness.records.metrics``, as on the leaderboard), and wall time.
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from harness.errors import UserError

# LLM options handed to every generator that declares them (all but the non-LLM baselines).
LLM_FLAGS = (("--provider", "provider"), ("--llm-model", "llm_model"), ("--llm-base-url", "llm_base_url"),
             ("--backend", "backend"), ("--cassette", "cassette"))


def add_parser(subparsers: Any) -> None:
    from harness.options import EVAL, add_options

    parser = subparsers.add_parser(
        "compare", help="compare generators (e.g. mkevolve, direct, kforge) at an equal per-problem token budget",
        description=__doc__)
    parser.add_argument("--generators", default="mkevolve,direct,kforge",
                        help="comma-separated generator names (default: mkevolve,direct,kforge)")
    parser.add_argument("--token-budget", type=_positive_int, required=True,
                        help="tokens (input + output) each generator may spend per problem")
    parser.add_argument("--level", default="2,3", help="levels, e.g. 2,3 (default: 2,3)")
    parser.add_argument("--subset", default="representative",
                        help="all, representative or starter (default: representative)")
    parser.add_argument("--problem", action="append", default=None, help="glob over problem names or ids (repeatable)")
    parser.add_argument("--kernelbench-root", default=None, help="an upstream KernelBench checkout to load problems from")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="GENERATOR.OPTION=VALUE",
                        help="a generator option, e.g. mkevolve.beam_width=3 or kforge.max_functional_passes=3 (repeatable)")
    parser.add_argument("--json", dest="json_path", default=None, help="also write the summary as JSON to this file")
    for flag, dest in LLM_FLAGS:
        parser.add_argument(flag, dest=dest, default=None, help=f"LLM option for every LLM generator ({dest})")
    add_options(parser.add_argument, EVAL)
    parser.set_defaults(run=run)


def _positive_int(text: str) -> int:
    import argparse

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be positive")
    return value


def run(args: Any) -> int:
    from harness.judge.eval_setup import eval_options_from
    from harness.problems.suite import load_selected, parse_levels

    generators = [name.strip() for name in args.generators.split(",") if name.strip()]
    if not generators:
        raise UserError("--generators is empty; name at least one generator, e.g. --generators mkevolve,direct")
    settings = parse_settings(args.settings, generators)
    opts = eval_options_from(lambda dest: getattr(args, dest))
    problems = load_selected(args.size, levels=parse_levels(args.level), patterns=args.problem, subset=args.subset,
                             kernelbench_root=args.kernelbench_root)
    if not problems:
        raise UserError("no problem matches the selection (--level / --subset / --problem)")
    results = {name: run_generator(name, problems, opts, args, settings.get(name, {})) for name in generators}
    summary = summarize(results, problems)
    context = (f"{args.size} size, {opts.device}, provider {args.provider or 'default'}, "
               f"token budget {args.token_budget:,} per problem")
    for line in format_table(summary, context):
        print(line)
    if args.json_path:
        Path(args.json_path).write_text(json.dumps({"context": context, "summary": summary}, indent=1, default=str))
    return 0


def parse_settings(items: list[str], generators: list[str]) -> dict[str, dict]:
    """``mkevolve.beam_width=3`` -> {"mkevolve": {"beam_width": 3}}; values read as JSON when they parse."""
    settings: dict[str, dict] = defaultdict(dict)
    for item in items:
        key, equals, text = item.partition("=")
        name, dot, option = key.partition(".")
        if not (equals and dot and name and option):
            raise UserError(f"--set {item!r}: write GENERATOR.OPTION=VALUE, e.g. --set mkevolve.beam_width=3")
        if name not in generators:
            raise UserError(f"--set {item!r}: {name} is not among --generators ({', '.join(generators)})")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        settings[name][option] = value
    return dict(settings)


def run_generator(name: str, problems: list, opts: Any, args: Any, options: dict) -> dict:
    from harness.candidate import Budget
    from harness.registry import lookup
    from harness.executors.runner import Runner

    takes = {option.dest for option in getattr(lookup("generator", name), "options", ())}
    options = {**{dest: getattr(args, dest) for _, dest in LLM_FLAGS if dest in takes and getattr(args, dest, None)},
               **options}
    runner = Runner(name, opts, args.runs_dir, generator_options=options, budget=Budget(max_tokens=args.token_budget),
                    log=lambda line: print(line, file=sys.stderr),
                    extra_config={"compare": {"token_budget": args.token_budget}})
    records, seconds = [], {}
    for index, problem in enumerate(problems, 1):
        began = time.perf_counter()
        new = runner.run_problem(problem)
        records += new
        seconds[problem.id] = time.perf_counter() - began
        best = max(new, key=lambda r: bool(r.get("correct")))
        tokens = sum(int((r.get("usage") or {}).get("input_tokens", 0) + (r.get("usage") or {}).get("output_tokens", 0))
                     for r in new)
        print(f"[{name} {index}/{len(problems)}] {problem.id}: {best['status']}"
              f"{' flags=' + ','.join(best['flags']) if best.get('flags') else ''}, {tokens:,} tokens, "
              f"{seconds[problem.id]:.0f} s", file=sys.stderr, flush=True)
    return {"records": records, "seconds": seconds, "run_file": str(runner.path)}


def summarize(results: dict[str, dict], problems: list) -> dict:
    """Per level, per generator: the headline metrics over all selected problems of that level."""
    from harness.records.metrics import level_summary

    levels = sorted({p.level for p in problems})
    # Problems the suite excludes (EXCLUDE) are run and recorded but never scored, as on the leaderboard.
    per_level = {level: sum(1 for p in problems if p.level == level and not p.exclude) for level in levels}
    summary: dict = {}
    for level in levels:
        rows = {}
        for name, result in results.items():
            records = [r for r in result["records"] if r.get("level") == level]
            metrics = level_summary(records, total_problems=per_level[level])
            wall = sum(t for problem_id, t in result["seconds"].items() if problem_id.startswith(f"L{level}/"))
            rows[name] = {key: metrics[key] for key in ("problems", "correct", "correctness_rate", "geomean_speedup",
                                                        "speed_measured", "tokens_per_problem", "tokens_per_correct",
                                                        "tokens")}
            rows[name].update(wall_s=round(wall, 1), run_file=result["run_file"],
                              excluded=sum(1 for p in problems if p.level == level and p.exclude))
        summary[f"L{level}"] = rows
    return summary


def format_table(summary: dict, context: str) -> list[str]:
    header = (f"{'generator':<12} {'correct':>12} {'geomean speedup':>18} {'tokens/problem':>15} "
              f"{'tokens/correct':>15} {'wall':>8}")
    lines = []
    for level, rows in summary.items():
        first = next(iter(rows.values()), {})
        excluded = f", {first['excluded']} excluded and not scored" if first.get("excluded") else ""
        lines += ["", f"{level}: {first.get('problems', 0)} problems{excluded} ({context})", header, "-" * len(header)]
        for name, row in rows.items():
            rate = row["correctness_rate"] or 0.0
            speed = (f"{row['geomean_speedup']:.3f} ({row['speed_measured']})" if row["geomean_speedup"]
                     else "not measured")
            lines.append(f"{name:<12} {row['correct']:>4g}/{row['problems']:<3} {100 * rate:>3.0f}% {speed:>18} "
                         f"{_number(row['tokens_per_problem']):>15} {_number(row['tokens_per_correct']):>15} "
                         f"{row['wall_s']:>7.0f}s")
    lines += ["", "run files: " + ", ".join(sorted({r['run_file'] for rows in summary.values() for r in rows.values()}))]
    return lines


def _number(value: Any) -> str:
    return "n/a" if value is None else f"{value:,.0f}"
