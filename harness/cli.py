"""``python -m harness``: evaluate one candidate, run a generator over a suite, and the suites' tools.

Exit status: 0 whenever a verdict was reached (whatever it is), 2 for usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from harness.errors import UserError
from harness.options import DEFAULT_GENERATOR, EVAL, add_options, run_options

SUMMARY_FIELDS = ("status", "correct", "speedup", "speedup_compile", "sol_fraction", "flags", "reason")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m harness", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="judge one candidate file against one reference problem file",
                        description="Judge a KernelBench-format candidate (ModelNew) against a problem (Model). "
                                    "With --json the last line of stdout is one JSON object (docs/INTERFACES.md §7).")
    ev.add_argument("--reference", required=True, help="the problem file (Model, get_inputs, get_init_inputs)")
    ev.add_argument("--candidate", required=True, help="the candidate file (ModelNew)")
    ev.add_argument("--json", action="store_true", help="print the verdict as one JSON object on the last line")
    ev.add_argument("--no-record", action="store_true", help="do not append the record to a run file")
    add_options(ev.add_argument, EVAL)
    _add_run_parser(sub)
    _add_plugin_parsers(sub)
    return parser


def _add_run_parser(sub) -> None:
    run = sub.add_parser("run", help="run a generator over the KernelBench suite (like the pytest suite, without pytest)")
    add_options(run.add_argument, run_options())


def _add_plugin_parsers(sub) -> None:
    """Subcommands contributed by the suites (megakernel schedules, the exploit corpus, comparisons)."""
    for module_name in ("harness.megakernel.cli", "harness.exploits_cli", "harness.compare_cli", "harness.records.publish"):
        try:
            module = __import__(module_name, fromlist=["add_parser"])
        except ModuleNotFoundError as error:
            if error.name and module_name.startswith(error.name):
                continue
            raise
        module.add_parser(sub)


def main(argv: list[str] | None = None) -> int:
    try:
        parser = build_parser()
    except UserError as error:  # a generator's file that does not import, or two that clash
        print(f"error: {error}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    try:
        if args.command == "eval":
            return _eval(args)
        if args.command == "run":
            return _run(args)
        return args.run(args)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _options(args):
    from harness.judge.eval_setup import eval_options_from

    return eval_options_from(lambda dest: getattr(args, dest))


def _eval(args) -> int:
    from harness.judge.evaluate import EvalCache, evaluate
    from harness.problems.problem import load_problem

    candidate = Path(args.candidate)
    missing = [f"{flag} {path}" for flag, path in (("--reference", args.reference), ("--candidate", candidate))
               if not Path(path).is_file()]
    if missing:
        raise UserError(f"no such file: {'; '.join(missing)}. Give the path of an existing file to each.")
    opts = _options(args)
    problem = load_problem(args.reference, size=args.size)
    record = evaluate(problem, candidate.read_text(), opts, EvalCache(), identity={"generator": "file", "attempt": 0})
    record["candidate_path"] = str(candidate)
    if not args.no_record:
        _append_eval_record(args, opts, record)
    _print_verdict(record, args.json)
    return 0


def _append_eval_record(args, opts, record: dict) -> None:
    from harness.judge.device import provenance
    from harness.records.results import RunWriter, new_run_id, run_file_name

    run_id = new_run_id()
    header = {"run_id": run_id, "provenance": provenance(opts.device),
              "config": {"suite": "eval", "generator": "file", "precision": opts.precision, "size": opts.size,
                         "device": opts.device, "trials": opts.trials, "flags": {"allow_tf32": opts.allow_tf32}}}
    record["run_id"] = run_id
    RunWriter(Path(args.runs_dir) / run_file_name(run_id, "eval", "file"), header).append(record)


def _print_verdict(record: dict, as_json: bool) -> None:
    if as_json:
        public = {k: record.get(k) for k in SUMMARY_FIELDS}
        public.update({k: v for k, v in record.items() if k not in public and k != "candidate_source"})
        print(json.dumps(public, default=str))
        return
    print(f"status: {record['status']}  correct: {record['correct']}")
    if record.get("reason"):
        print(f"reason: {record['reason']}")
    for key in ("candidate_ms", "eager_ms", "compile_ms", "speedup", "speedup_compile", "sol_fraction"):
        if record.get(key) is not None:
            print(f"{key}: {record[key]:.4g}")
    if record["flags"]:
        print(f"flags: {', '.join(record['flags'])}")
    for remark in record.get("remarks", []):
        print(f"remark: {remark}")


def _run(args) -> int:
    from harness.llm_options import budgets_from_args
    from harness.options import generator_kwargs
    from harness.registry import check_applies
    from harness.executors.options import run_sweep
    from harness.records.progress import Progress
    from harness.executors.runner import Runner
    from harness.problems.suite import load_selected, parse_levels

    opts = _options(args)
    problems = load_selected(args.size, levels=parse_levels(args.level), patterns=args.problem,
                             subset=args.subset, kernelbench_root=args.kernelbench_root)
    if not problems:
        raise UserError("no problem matches the selection (--level / --problem / --subset)")
    if args.executor == "ray":
        from harness.executors import import_ray

        import_ray()  # says how to install it before anything is written
    budget, run_budget = budgets_from_args(args)
    generator = args.generator or DEFAULT_GENERATOR
    check_applies(generator, "kernelbench")
    runner = Runner(generator, opts, args.runs_dir, generator_options=generator_kwargs(generator, lambda d: getattr(args, d)),
                    resume=args.resume, budget=budget, run_budget=run_budget,
                    extra_config={"executor": "ray"} if args.executor == "ray" else None)
    progress = Progress(len(problems))
    records = run_sweep(args.executor, runner, problems, progress, ray_address=args.ray_address)
    progress.summary(records, runner.path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
