"""``python -m harness schedules``: check one schedule, lower a config, or run the corpus.

Exit codes: ``--check`` 0 accepted, 1 rejected (unsafe: the witness and a trace are printed), 2
when the file is not a schedule at all (empty, truncated, not JSON: the parse error and its line
and column); ``--corpus`` 0 when the validator has no false accepts and no false rejects where the
oracle is exhaustive, else 1; ``--amk-corpus`` 0 with no false accepts and no false rejects at all,
else 1; 2 for usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys

from harness.errors import UserError

DEFAULT_SUMMARY = "runs/megakernel_summary.json"  # publish with: python -m harness publish FILE


def add_parser(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("schedules", help="check, lower and stress megakernel schedules",
                                   description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--check", metavar="FILE", help="validate one schedule (Crucible or AMK IR 0.2 JSON)")
    action.add_argument("--lower", metavar="CONFIG", help="lower a preset name (tiny, small, llama-1b) or a JSON "
                        "file {model, schedule, position, target} to a schedule")
    action.add_argument("--corpus", action="store_true", help="build, label and score the adversarial corpus")
    action.add_argument("--amk-corpus", action="store_true", help="build and score the corpus in AutoMegaKernel's "
                        "dialect (sm null, AMK's ops) against the exact oracle (default 10000 schedules)")
    parser.add_argument("--json", action="store_true", help="print the verdict as one JSON object")
    parser.add_argument("--oracle", action="store_true", help="with --check: also run the oracle")
    parser.add_argument("--out", metavar="FILE", help="with --lower: write the schedule here (default stdout)")
    parser.add_argument("--amk", action="store_true", help="with --lower: write AutoMegaKernel IR 0.2")
    parser.add_argument("--position", type=int, default=0, help="with --lower: decode position (default 0)")
    parser.add_argument("--seed", type=int, default=None, help="with --corpus: corpus seed (default built in)")
    parser.add_argument("--size", type=int, default=None, help="with --corpus: schedules (default 10400)")
    parser.add_argument("--workers", type=int, default=None, help="with --corpus: processes (default: cores)")
    parser.add_argument("--runs-dir", default="runs", help="with --corpus: run files (default runs)")
    parser.add_argument("--summary", default=DEFAULT_SUMMARY, help=f"with --corpus: summary JSON (default {DEFAULT_SUMMARY})")
    parser.set_defaults(run=run)
    return parser


def run(args) -> int:
    try:
        if args.check:
            return _check(args)
        if args.lower:
            return _lower(args)
        if args.amk_corpus:
            return _amk_corpus(args)
        return _corpus(args)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def _check(args) -> int:
    from harness.megakernel import oracle
    from harness.megakernel.amk_io import normalise
    from harness.megakernel.format import parse
    from harness.megakernel.validator import validate
    from harness.megakernel.witness import witness_trace

    doc = normalise(parse(args.check))
    verdict = validate(doc)
    out = verdict.to_dict()
    if verdict.placed is not None:  # the witness refers to the schedule as the loader placed it
        doc = verdict.placed
    elif not verdict.ok and verdict.safety is not None and verdict.stats.get("placement") == "amk_loader":
        from harness.megakernel.loader_check import placed_document

        doc = placed_document(doc) or doc
    if not verdict.ok and verdict.violations[0]["class"] != "internal_error":
        out["witness_trace"] = witness_trace(doc, verdict.violations[0])
    if args.oracle:
        out["oracle"] = oracle.label(doc)
    if args.json:
        print(json.dumps(out, default=str))
    else:
        print(f"{args.check}: {verdict.report()}")
        for line in _legend(doc, verdict.violations[:1]):
            print(f"      {line}")
        trace = out.get("witness_trace")
        if trace is not None:
            when = f"after tasks {trace} complete, in that order" if trace else "right at launch"
            print(f"  it can happen {when} (replayable with harness.megakernel.oracle.replay)")
        if args.oracle:
            o = out["oracle"]
            print(f"  oracle ({o['mode']}, {o['states']} states): {'safe' if o['safe'] else 'UNSAFE ' + str(o['kinds'])}")
    return 0 if verdict.ok else 1


def _legend(doc, violations: list[dict]) -> list[str]:
    """Names of the tasks and buffers a witness mentions, so ids can be read without the file."""
    if not isinstance(doc, dict) or not violations:
        return []
    witness = violations[0].get("witness", {})
    tasks = {t.get("id"): t for t in doc.get("tasks", []) if isinstance(t, dict)}
    buffers = {b.get("id"): b for b in doc.get("buffers", []) if isinstance(b, dict)}
    lines = []
    for key in ("writer", "reader", "task", "waiter", "writers", "cycle"):
        for tid in witness.get(key, []) if isinstance(witness.get(key), list) else [witness.get(key)]:
            task = tasks.get(tid) if isinstance(tid, int) else None
            if task:
                lines.append(f"task {tid} = {task.get('label') or task.get('op')} ({task.get('op')} on SM {task.get('sm')})")
    for key in ("buffer", "buffers"):
        for bid in witness.get(key, []) if isinstance(witness.get(key), list) else [witness.get(key)]:
            buf = buffers.get(bid) if isinstance(bid, int) else None
            if buf:
                lines.append(f"buffer {bid} = {buf.get('name')} ({buf.get('kind')}, {buf.get('space', 'HBM')})")
    return list(dict.fromkeys(lines))


def _lower(args) -> int:
    from harness.megakernel.amk_io import to_amk
    from harness.megakernel.configs import PRESETS, TARGETS, ModelConfig, ScheduleConfig
    from harness.megakernel.lowering import lower
    from harness.megakernel.validator import validate

    spec = _lower_spec(args.lower, PRESETS)
    model = PRESETS[spec["model"]] if isinstance(spec.get("model"), str) else ModelConfig.from_dict(spec.get("model", {}))
    sched = ScheduleConfig.from_dict(spec.get("schedule", {}))
    target = spec.get("target")
    target = TARGETS.get(target) if isinstance(target, str) else target
    if isinstance(spec.get("target"), str) and target is None:
        raise UserError(f"unknown target {spec['target']!r}; known: {sorted(TARGETS)}")
    doc = lower(model, sched, spec.get("position", args.position), target)
    text = json.dumps(to_amk(doc) if args.amk else doc, indent=1)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(text + "\n")
    else:
        print(text)
    verdict = validate(doc)
    print(f"lowered {len(doc['tasks'])} tasks on {sched.num_sms} SMs: "
          f"{'accepted' if verdict.ok else 'REJECTED ' + str(verdict.classes)}", file=sys.stderr)
    return 0 if verdict.ok else 1


def _lower_spec(value: str, presets: dict) -> dict:
    if value in presets:
        return {"model": value}
    try:
        with open(value) as handle:
            spec = json.load(handle)
    except OSError:
        raise UserError(f"--lower {value!r}: not a preset ({', '.join(sorted(presets))}) and not a readable file") from None
    except json.JSONDecodeError as error:
        raise UserError(f"--lower {value}: not JSON ({error}); expected {{model, schedule, position, target}}") from None
    if not isinstance(spec, dict):
        raise UserError(f"--lower {value}: expected a JSON object {{model, schedule, position, target}}")
    return spec


def _amk_corpus(args) -> int:
    import time

    from harness.megakernel import amk_corpus

    seed = amk_corpus.DEFAULT_SEED if args.seed is None else args.seed
    size = amk_corpus.DEFAULT_SIZE if args.size is None else args.size
    start = time.perf_counter()
    items = amk_corpus.build(seed, size)
    result = amk_corpus.score(items)
    print(f"{'class':24s} {'view':6s} {'n':>6s} {'TA':>5s} {'TR':>5s} {'FA':>3s} {'FR':>3s} {'sampled':>7s}")
    for cls, views in sorted(result["per_class"].items()):
        for view, row in views.items():
            print(f"{cls:24s} {view:6s} {row['n']:6d} {row['true_accept']:5d} {row['true_reject']:5d} "
                  f"{row['false_accept']:3d} {row['false_reject']:3d} {row['sampled']:7d}")
    for view, row in result["all"].items():
        print(f"ALL {view}: n={row['n']} true_accept={row['true_accept']} true_reject={row['true_reject']} "
              f"false_accept={row['false_accept']} false_reject={row['false_reject']} sampled={row['sampled']}")
    print(f"{len(items)} AMK-dialect schedules (seed {seed}) in {time.perf_counter() - start:.0f} s")
    for mistake in result["mistakes"]:
        print(f"MISTAKE {mistake}")
    return 1 if result["mistakes"] else 0


def _corpus(args) -> int:
    from harness.megakernel import corpus, records, report, suite

    summary = records.new_summary()
    seed = corpus.DEFAULT_SEED if args.seed is None else args.seed
    size = corpus.DEFAULT_SIZE if args.size is None else args.size
    rows = suite.corpus_part(summary, seed, size, args.workers)
    suite.throughput_part(summary, seed, size)
    print(report.table_text(summary["per_class"]))
    for mode, c in summary["confusion"].items():
        print(f"{mode:11s} n={c['n']:6d} true_reject={c['true_reject']} true_accept={c['true_accept']} "
              f"false_reject={c['false_reject']} false_accept={c['false_accept']}")
    t = summary["throughput"]
    print(f"validator: {t['small_per_s']:.0f} small schedules/s (mean {t['small_mean_tasks']:.1f} tasks); "
          f"largest lowering {t['largest']['tasks']} tasks in {t['largest']['seconds']:.3f} s")
    records.write_summary(summary, args.summary)
    path = records.write_run(summary, args.runs_dir)
    print(f"wrote {args.summary} and {path}")
    bad = [r for r in rows if r["accepted"] and not r["safe"]
           or (not r["accepted"] and r["safe"] and r["mode"] == "exhaustive")]
    return 1 if bad else 0
