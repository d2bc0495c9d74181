"""Validator throughput against AutoMegaKernel's own ``validate()``, in one process, on the same
AMK-written schedules.

Schedules: the twelve AMK samples (tests/megakernel/fixtures/amk_samples) and, where AMK's code
can be imported, lowerings AMK writes itself of toy Llamas of growing size (AMK's ``lower`` with
one-column GEMV tiles: 462 to 3,342 tasks). Both sides start from the same parsed JSON
object. For AMK two times are taken: ``validate(program)`` on a program built beforehand (the
function alone) and ``from_dict`` + ``validate`` (file object to verdict, as ours is timed).
Ours is ``validate(doc)`` on AMK's own document: placement and every check, and the import
(``amk_io.from_amk``) wherever the verdict needs it (the native fast path reads AMK's document
as the import would make it). Where the fast path proves a schedule unsafe it names the
violations (witness included) only when they are first read, so ours is also timed with them
read (``ours+why``: what AMK's ``validate`` returns, its error messages, is always built). Rounds
alternate the two sides so that drift hits both; the median per-schedule time over rounds is
reported. ``--floor`` adds, per schedule, what 10x leaves (a tenth of AMK's ``validate()``) next
to the least any native reader spends (a bare visit of the document's objects) and to the
import that ours no longer needs for a verdict (``normalise``).

AMK is not on PyPI. Point ``--amk PATH`` (or ``AMK_PATH``) at a checkout of its public code
(github.com/RightNow-AI/AutoMegaKernel); without one this prints our side only and says so.

    PYTHONPATH=$PWD python bench/megakernel_amk_throughput.py --amk /path/to/AutoMegaKernel
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "tests" / "megakernel" / "fixtures" / "amk_samples"
# (layers, hidden, intermediate): AMK lowerings with one-column GEMV tiles
AMK_LOWERINGS = ((1, 64, 128), (3, 64, 128), (6, 96, 128), (9, 96, 128))


def _import_amk(path: str | None):
    import harness.megakernel.validator  # noqa: F401  (first: AMK's checkout has a harness.py of its own)

    if path:
        sys.path.append(str(Path(path).resolve()))
    try:
        from schedule import ir
    except ImportError as error:
        return None, f"AutoMegaKernel is not importable ({error}); pass --amk PATH to a checkout"
    return ir, f"AutoMegaKernel from {Path(ir.__file__).resolve().parent.parent}"


def _schedules(ir) -> list[tuple[str, str, dict]]:
    """(class, name, AMK document) for every schedule benchmarked."""
    out = []
    for path in sorted(SAMPLES.glob("*.json")):
        cls = "large" if path.stem.startswith("valid_large") else path.stem.split("_")[0]
        out.append((cls, path.stem, json.loads(path.read_text())))
    if ir is not None:
        out += _amk_lowerings(ir)
    return out


def _amk_lowerings(ir) -> list[tuple[str, str, dict]]:
    try:
        from models.toy import make_toy
        from schedule.graph import from_toy
        from schedule.lower import lower
    except ImportError as error:  # AMK's lowering needs torch
        print(f"(AMK lowerings skipped: {error})")
        return []
    out = []
    for layers, hidden, inter in AMK_LOWERINGS:
        graph = from_toy(make_toy(n_layers=layers, hidden=hidden, intermediate=inter))
        target = ir.TARGETS["h100"]  # AMK's loader needs a target (its tools pass one)
        program = lower(graph, target, ir.ScheduleConfig(tiling={"gemv": {"N_tile": 1}}), pos=3)
        doc = json.loads(program.to_json())
        out.append(("lowering", f"amk_lower_L{layers}_h{hidden}_i{inter}", doc))
    return out


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def _per_call(fn, budget_s: float, clock=time.perf_counter) -> float:
    """Seconds per call of ``fn``: calls repeated until ``budget_s`` is spent (at least 3), in
    batches that each take a fiftieth of it or more, so that reading the clock (a system call for
    CPU time, about a microsecond) is not counted into calls of a few microseconds."""
    batch, calls, start = 1, 0, clock()
    while True:
        began = clock()
        for _ in range(batch):
            fn()
        calls += batch
        now = clock()
        if calls >= 3 and now - start >= budget_s:
            return (now - start) / calls
        if now - began < budget_s / 50:
            batch *= 2


def measure(ir, schedules, rounds: int, budget_s: float, clock=time.perf_counter) -> list[dict]:
    from harness.megakernel.validator import validate

    rows = []
    for cls, name, doc in schedules:
        ours = lambda doc=doc: validate(doc)  # noqa: E731
        why = lambda doc=doc: validate(doc).violations  # noqa: E731
        verdict = ours()
        row = {"class": cls, "name": name, "tasks": len(doc["tasks"]), "ours_ok": verdict.ok,
               "safety": verdict.safety, "ours_s": [], "why_s": [], "amk_s": [], "amk_load_s": []}
        if ir is not None:
            program = ir.MegakernelProgram.from_dict(doc)
            row["amk_ok"] = ir.validate(program).ok
        for _ in range(rounds):
            row["ours_s"].append(_per_call(ours, budget_s, clock))
            row["why_s"].append(row["ours_s"][-1] if verdict.ok else _per_call(why, budget_s, clock))
            if ir is not None:
                row["amk_s"].append(_per_call(lambda p=program: ir.validate(p), budget_s, clock))
                row["amk_load_s"].append(_per_call(lambda d=doc: ir.validate(ir.MegakernelProgram.from_dict(d)),
                                                   budget_s, clock))
        for key in ("ours_s", "why_s", "amk_s", "amk_load_s"):
            row[key] = statistics.median(row[key]) if row[key] else None
        rows.append(row)
    return rows


def floors(ir, schedules, rows: list[dict], budget_s: float, clock=time.perf_counter) -> str:
    """What 10x AMK's ``validate()`` leaves per schedule, against the least a native reader spends
    visiting each object of the document's tasks, buffers and counters once, checking nothing
    (``_mkfast.touch``), and against the import (``normalise``: the copies and tile regions) that
    a verdict of the fast path does without."""
    from harness.megakernel import fastpath
    from harness.megakernel.amk_io import normalise

    if fastpath.native is None or ir is None:
        return "(floors need the native fast path and AMK)"
    lines = [f"{'schedule':30s} {'tasks':>5s} {'AMK/10 us':>9s} {'read us':>8s} {'ours us':>8s} "
             f"{'import us':>9s}  ours within 10x?"]
    for (cls, name, doc), row in zip(schedules, rows):
        parts = [doc["tasks"], doc["buffers"], doc["counters"]]
        imp = statistics.median(_per_call(lambda d=doc: normalise(d), budget_s, clock) for _ in range(3))
        read = statistics.median(_per_call(lambda p=parts: fastpath.native.touch(p), budget_s, clock)
                                 for _ in range(3))
        goal = row["amk_s"] / 10
        verdict = "yes" if row["ours_s"] <= goal else \
            "no: the bare read alone exceeds it" if read > goal else "no"
        lines.append(f"{name:30s} {row['tasks']:5d} {goal * 1e6:9.2f} {read * 1e6:8.2f} {row['ours_s'] * 1e6:8.2f} "
                     f"{imp * 1e6:9.2f}  {verdict}")
    return "\n".join(lines)


def table(rows: list[dict]) -> str:
    lines = [f"{'schedule':30s} {'tasks':>5s} {'ours ms':>8s} {'ours/s':>8s} {'AMK val/s':>9s} {'ratio':>6s} "
             f"{'+why ms':>8s} {'ratio':>6s} {'AMK load+val/s':>14s} {'ratio':>6s}  verdicts (ours / AMK)"]
    for r in rows:
        amk = f"{1 / r['amk_s']:9.0f} {r['amk_s'] / r['ours_s']:6.2f} {r['why_s'] * 1e3:8.3f} " \
              f"{r['amk_s'] / r['why_s']:6.2f} {1 / r['amk_load_s']:14.0f} {r['amk_load_s'] / r['ours_s']:6.2f}" \
            if r["amk_s"] else f"{'-':>9s} {'-':>6s} {r['why_s'] * 1e3:8.3f} {'-':>6s} {'-':>14s} {'-':>6s}"
        verdicts = f"{r['safety'] or ('accepted' if r['ours_ok'] else 'rejected')} / " + \
                   ("-" if "amk_ok" not in r else "accepted" if r["amk_ok"] else "rejected")
        lines.append(f"{r['name']:30s} {r['tasks']:5d} {r['ours_s'] * 1e3:8.3f} {1 / r['ours_s']:8.0f} {amk}  "
                     f"{verdicts}")
    lines.append("per class (schedules/s over the class's schedules, each once):")
    for cls in dict.fromkeys(r["class"] for r in rows):
        part = [r for r in rows if r["class"] == cls]
        ours = sum(r["ours_s"] for r in part)
        text = f"  {cls:10s} n={len(part):2d} ours {len(part) / ours:9.0f}/s"
        if part[0]["amk_s"]:
            amk, load = sum(r["amk_s"] for r in part), sum(r["amk_load_s"] for r in part)
            why = sum(r["why_s"] for r in part)
            text += (f"  AMK validate {len(part) / amk:8.0f}/s (x{amk / ours:.2f}; with why x{amk / why:.2f})"
                     f"  AMK from_dict+validate {len(part) / load:8.0f}/s (x{load / ours:.2f})")
        lines.append(text)
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--amk", default=os.environ.get("AMK_PATH"), help="path to an AutoMegaKernel checkout "
                        "(default: $AMK_PATH, else an installed one)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds per schedule (default 3)")
    parser.add_argument("--budget", type=float, default=0.2, help="seconds per timing (default 0.2)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                        help="wall: perf_counter; cpu: this process's CPU time, which other jobs on a "
                        "shared machine do not inflate (default wall)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    parser.add_argument("--floor", action="store_true", help="also time a bare native read of each document "
                        "and our import alone, against a tenth of AMK's validate() (what 10x leaves)")
    args = parser.parse_args(argv)
    ir, where = _import_amk(args.amk)
    try:
        from harness.megakernel import fastpath
        native = fastpath.native is not None
    except ImportError:  # (a version of ours from before the fast path)
        native = False
    print(f"{where}; ours: native fast path {'on' if native else 'off (pure Python)'}; clock: {args.clock}")
    schedules = _schedules(ir)
    rows = measure(ir, schedules, args.rounds, args.budget, CLOCKS[args.clock])
    print(table(rows))
    if args.floor:
        print(floors(ir, schedules, rows, args.budget, CLOCKS[args.clock]))
    import platform
    print(f"CPU: {platform.processor() or platform.machine()}, Python {platform.python_version()}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
