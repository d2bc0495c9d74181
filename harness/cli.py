"""``python -m harness``: evaluate one candidate, run a generator over a suite, and the suites' tools.

Exit status: 0 whenever a verdict was reached (whatever it is), 2 for usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from harness.errors import UserError
from harness.options import DEVICES, ON_OFF_AUTO, PRECISIONS, SIZES, positive_float, positive_int, typed
from harness.options import choice as _choice

def _typed_choice(name, allowed):
    return typed(_choice(name, allowed))


def _typed_int(name):
    return typed(positive_int(name))


def _typed_float(name):
    return typed(positive_float(name))


SUMMARY_FIELDS = ("status", "correct", "speedup", "speedup_compile", "sol_fraction", "flags", "reason")


def _common_eval_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", type=_typed_choice("--device", DEVICES), default="cpu",
                        help="where to run: cpu (correctness; CPU timings; Triton through its interpreter) or cuda (default: cpu)")
    parser.add_argument("--size", type=_typed_choice("--size", SIZES), default="small",
                        help="problem size: small (declared by the problem, or a best-effort shrink) or full (default: small)")
    parser.add_argument("--precision", type=_typed_choice("--precision", PRECISIONS), default="fp32",
                        help="floating precision of inputs and weights (default: fp32; tolerance 1e-4, 1e-2 for fp16/bf16)")
    parser.add_argument("--trials", type=_typed_int("--trials"), default=5, help="correctness trials, each on fresh inputs (default: 5)")
    parser.add_argument("--tolerance", type=_typed_float("--tolerance"), default=None, help="atol = rtol override (default: by precision)")
    parser.add_argument("--no-timing", action="store_true", help="check correctness only")
    parser.add_argument("--compile-baseline", type=_typed_choice("--compile-baseline", ON_OFF_AUTO), default="auto",
                        help="also time torch.compile of the reference: on, off, auto = on for cuda only (default: auto)")
    parser.add_argument("--allow-tf32", action="store_true", help="allow TF32 for fp32 matmuls on both sides (default: off)")
    parser.add_argument("--timing-budget-ms", type=_typed_float("--timing-budget-ms"), default=None,
                        help="time budget of each adaptive timing phase (default: 2000 on cuda, 500 on cpu)")
    parser.add_argument("--runs-dir", default="results/runs", help="where run files are appended (default: results/runs)")


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
    _common_eval_arguments(ev)
    _add_run_parser(sub)
    _add_plugin_parsers(sub)
    return parser


def _add_run_parser(sub) -> None:
    from harness.executors.options import add_executor_arguments
    from harness.llm_options import add_llm_arguments

    run = sub.add_parser("run", help="run a generator over the KernelBench suite (like the pytest suite, without pytest)")
    run.add_argument("--generator", default="reference", help="generator name (default: reference)")
    run.add_argument("--level", default="1,2,3", help="levels, e.g. 1,2 (default: 1,2,3)")
    run.add_argument("--problem", action="append", default=None, help="glob over problem names or ids, e.g. 'L2/23_*' (repeatable)")
    run.add_argument("--subset", default="all", help="all, representative (upstream's subset) or starter (default: all)")
    run.add_argument("--kernelbench-root", default=None, help="an upstream KernelBench checkout to load problems from")
    run.add_argument("--resume", action="store_true", help="append to the newest matching run file, skipping recorded problems")
    add_executor_arguments(run.add_argument)
    add_llm_arguments(run)
    _common_eval_arguments(run)


def _add_plugin_parsers(sub) -> None:
    """Subcommands contributed by the suites (megakernel schedules, the exploit corpus, comparisons)."""
    for module_name in ("harness.megakernel.cli", "harness.exploits_cli", "harness.compare_cli"):
        try:
            module = __import__(module_name, fromlist=["add_parser"])
        except ModuleNotFoundError as error:
            if error.name and module_name.startswith(error.name):
                continue
            raise
        module.add_parser(sub)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
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
    from harness.options import eval_options

    return eval_options(device=args.device, precision=args.precision, size=args.size, timing=not args.no_timing,
                        trials=args.trials, tolerance=args.tolerance, allow_tf32=args.allow_tf32,
                        compile_baseline=args.compile_baseline, timing_budget_ms=args.timing_budget_ms)


def _eval(args) -> int:
    from harness.evaluate import EvalCache, evaluate
    from harness.problem import load_problem

    candidate = Path(args.candidate)
    if not candidate.is_file():
        raise UserError(f"--candidate {candidate}: no such file")
    opts = _options(args)
    problem = load_problem(args.reference, size=args.size)
    record = evaluate(problem, candidate.read_text(), opts, EvalCache(), identity={"generator": "file", "attempt": 0})
    record["candidate_path"] = str(candidate)
    if not args.no_record:
        _append_eval_record(args, opts, record)
    _print_verdict(record, args.json)
    return 0


def _append_eval_record(args, opts, record: dict) -> None:
    from harness.device import provenance
    from harness.results import RunWriter, new_run_id, run_file_name

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
    from harness.executors.options import run_sweep
    from harness.llm_options import generator_options_from_args, budgets_from_args
    from harness.progress import Progress
    from harness.runner import Runner
    from harness.suite import load_selected, parse_levels

    opts = _options(args)
    problems = load_selected(args.size, levels=parse_levels(args.level), patterns=args.problem,
                             subset=args.subset, kernelbench_root=args.kernelbench_root)
    if not problems:
        raise UserError("no problem matches the selection (--level / --problem / --subset)")
    if args.executor == "ray":
        from harness.executors import import_ray

        import_ray()  # says how to install it before anything is written
    budget, run_budget = budgets_from_args(args)
    runner = Runner(args.generator, opts, args.runs_dir, generator_options=generator_options_from_args(args),
                    resume=args.resume, budget=budget, run_budget=run_budget,
                    extra_config={"executor": "ray"} if args.executor == "ray" else None)
    progress = Progress(len(problems))
    records = run_sweep(args.executor, runner, problems, progress, ray_address=args.ray_address)
    progress.summary(records, runner.path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
