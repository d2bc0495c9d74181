"""Decode-step latency of the persistent megakernel against eager PyTorch and eager under CUDA graphs.

For every lowering configuration the suite ships (3 small models x 4 schedules) and a 1B-class Llama
(Llama-3.2-1B shapes, random fp32 weights; two schedules), batch 1: first
correctness (a greedy decode on the megakernel compared step by step with eager), then the timing of
one decode step at a fixed position, four ways, alternated round by round with L2 flushed before
each call (``executor_timing``): the megakernel launched plainly, the megakernel in a CUDA graph,
eager, eager in a CUDA graph. ``ratio`` is eager-with-graphs time over the megakernel's (above 1:
the megakernel is faster).

Prints one table; writes (and after every row rewrites) a JSON file. Rows already in that file with
the same key are kept and skipped, so a run cut short resumes where it stopped (``--fresh`` ignores
them). Needs a CUDA GPU (about 14 GB of memory for the 1B-class rows).

Rows: the 12 suite configurations; ``1b-suite`` (the suite's 1B-class schedule, 128-wide tiles);
``1b-wide`` (16-wide GEMV tiles, so every projection has at least 128 tiles for 132 SMs); ``1b-mid``
(32-wide tiles: half the tasks, half the tiles on the narrowest projections); ``1b-sweep``
(the wide schedule's megakernel alone under a few GEMV block shapes).

Usage: python bench/megakernel_gpu.py --out RESULTS.json [--skip-1b] [--only-1b] [--no-sweep] [--steps 4]
       [--budget-s 5] [--fresh]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SMALL_POSITION, LARGE_POSITION = 8, 128


def small_row(name: str, index: int, steps: int, budget_s: float) -> dict:
    import torch

    from harness.megakernel.executor_check import decode
    from harness.megakernel.llama_ref import init_weights
    from harness.megakernel.suite import VM_MODELS, VM_SCHEDULES

    model, sched = VM_MODELS[name], VM_SCHEDULES[index]
    agreement = decode(model, sched, steps=steps, device="cuda").to_dict()
    weights = {k: v.cuda() for k, v in init_weights(model, 0).items()}
    row = timed(model, sched, weights, SMALL_POSITION, budget_s)
    del weights
    torch.cuda.empty_cache()
    return {**row, "model": name, "correct": agreement["ok"], "agreement": agreement}


def large_schedules(sms: int) -> dict:
    """The suite's 1B-class schedule (throughput.LARGEST: 128-wide tiles, 3,688 tasks) and a wider
    one whose every GEMV stage has at least 128 tiles, so each SM pulls its share of the weights."""
    from harness.megakernel.configs import ScheduleConfig
    from harness.megakernel.throughput import LARGEST

    wide = ScheduleConfig(num_sms=132, gemv_tile=16, lm_head_tile=1024, silu_tile=1024, attn_heads_per_task=1,
                          sm_policy="round_robin")
    return {"suite": replace(LARGEST, num_sms=min(LARGEST.num_sms, sms)),
            "wide": replace(wide, num_sms=min(wide.num_sms, sms)),
            "mid": replace(wide, num_sms=min(wide.num_sms, sms), gemv_tile=32)}


def large_row(which: str, steps: int, budget_s: float, weights: dict) -> dict:
    import torch

    from harness.megakernel.configs import PRESETS
    from harness.megakernel.executor_check import decode_against_eager

    model = PRESETS["llama-1b"]
    sched = large_schedules(torch.cuda.get_device_properties(0).multi_processor_count)[which]
    agreement = decode_against_eager(model, sched, weights, steps=steps)
    torch.cuda.empty_cache()
    row = timed(model, sched, weights, LARGE_POSITION, budget_s)
    torch.cuda.empty_cache()
    return {**row, "model": f"1b-{which}", "correct": agreement["ok"], "agreement": agreement}


BLOCK_VARIANTS = [{}, {"BN": 16, "BK": 256}, {"BN": 32, "BK": 256}, {"BN": 64, "BK": 128}]


def sweep_row(budget_s: float, weights: dict) -> dict:
    """The wide 1B-class schedule's megakernel alone under a few GEMV block shapes (outputs compared
    with the default shape's)."""
    import torch

    from harness.megakernel.configs import PRESETS
    from harness.megakernel.executor import Megakernel
    from harness.megakernel.executor_timing import time_alternating
    from harness.megakernel.lowering import lower

    model = PRESETS["llama-1b"]
    sched = large_schedules(torch.cuda.get_device_properties(0).multi_processor_count)["wide"]
    doc, mk, variants, reference = lower(model, sched, LARGE_POSITION), Megakernel(weights, "cuda"), [], None
    for blocks in BLOCK_VARIANTS:
        mk.block_override = dict(blocks)
        prepared = mk.prepare(doc)
        launch = prepared.step({"token": 1}, poison=False)
        reference = launch.logits() if reference is None else reference
        timing = time_alternating({"mk": prepared.launch}, budget_s=budget_s / 2, max_reps=200)["mk"]
        variants.append({"blocks": prepared.blocks, "median_ms": timing["median_ms"], "ok": launch.ok,
                         "same_logits": bool(torch.allclose(launch.logits(), reference, atol=1e-3, rtol=1e-3))})
    return {"model": "1b-sweep", "schedule": sched.name(), "variants": variants}


def timed(model, sched, weights: dict, pos: int, budget_s: float) -> dict:
    """One decode step at ``pos``, four ways; the outputs of each are checked against eager's first."""
    import torch

    from harness.megakernel.executor import Megakernel
    from harness.megakernel.executor_eager import EagerDecode
    from harness.megakernel.executor_timing import graphed, time_alternating
    from harness.megakernel.lowering import lower

    doc = lower(model, sched, pos)
    mk = Megakernel(weights, "cuda")
    prepared = mk.prepare(doc)
    launch = prepared.step({"token": 1}, poison=False)
    eager = EagerDecode(model, weights, "cuda")
    token = torch.tensor([1], device="cuda")
    expected = eager.step(token, pos)
    eager_replay, graph_logits = eager.graphed(token, pos)
    eager_replay()
    torch.cuda.synchronize()
    same = (launch.ok and torch.allclose(launch.logits(), expected.cpu(), atol=1e-3, rtol=1e-3)
            and torch.allclose(graph_logits.cpu(), expected.cpu(), atol=1e-3, rtol=1e-3))
    timings = time_alternating({"megakernel": prepared.launch, "megakernel_graph": graphed(prepared.launch),
                                "eager": lambda: eager.step(token, pos), "eager_graph": eager_replay},
                               budget_s=budget_s)
    deadlocked = prepared.flag.item() != 0       # a spin that hit its bound in any timed launch
    medians = {k: v["median_ms"] for k, v in timings.items()}
    return {"key": f"{model.name()}/{sched.name()}", "schedule": sched.name(), "position": pos,
            "tasks": len(doc["tasks"]), "programs": prepared.packed.programs, "same_step_outputs": bool(same),
            "deadlocked_while_timed": bool(deadlocked), "timings": timings, "median_ms": medians,
            "ratio_vs_eager_graph": medians["eager_graph"] / medians["megakernel"],
            "ratio_vs_eager": medians["eager"] / medians["megakernel"],
            "graph_ratio_vs_eager_graph": medians["eager_graph"] / medians["megakernel_graph"]}


def table(rows: list[dict]) -> str:
    head = (f"{'model':9s} {'schedule':44s} {'tasks':>5s} {'progs':>5s} {'ok':>3s} {'mk ms':>8s} {'mk+g ms':>8s} "
            f"{'eager ms':>8s} {'eag+g ms':>8s} {'ratio':>6s}")
    lines = [head, "-" * len(head)]
    for r in rows:
        if "variants" in r:
            for v in r["variants"]:
                lines.append(f"{r['model']:9s} blocks BN={v['blocks']['BN']} BK={v['blocks']['BK']:<27d} "
                             f"{'':11s} {'yes' if v['ok'] and v['same_logits'] else 'NO':>3s} {v['median_ms']:8.4f}")
            continue
        if "error" in r:
            lines.append(f"{r['model']:9s} {r.get('schedule', ''):44s} ERROR {r['error'][:80]}")
            continue
        m = r["median_ms"]
        ok = "yes" if r["correct"] and r["same_step_outputs"] and not r["deadlocked_while_timed"] else "NO"
        lines.append(f"{r['model']:9s} {r['schedule']:44s} {r['tasks']:5d} {r['programs']:5d} {ok:>3s} "
                     f"{m['megakernel']:8.4f} {m['megakernel_graph']:8.4f} {m['eager']:8.4f} {m['eager_graph']:8.4f} "
                     f"{r['ratio_vs_eager_graph']:6.2f}")
    lines.append("ratio = eager in a CUDA graph / megakernel (plain launch); above 1 the megakernel is faster")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="JSON file for the results (rows already there are skipped)")
    parser.add_argument("--steps", type=int, default=4, help="greedy decode steps checked per configuration (the GPU tests check 8)")
    parser.add_argument("--budget-s", type=float, default=5.0, help="timing budget per configuration, seconds")
    parser.add_argument("--skip-1b", action="store_true")
    parser.add_argument("--only-1b", action="store_true")
    parser.add_argument("--no-sweep", action="store_true", help="skip the GEMV block-shape sweep on the 1B-class shape")
    parser.add_argument("--fresh", action="store_true", help="ignore rows already in --out")
    args = parser.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("megakernel_gpu: needs a CUDA GPU; none is visible. Nothing to measure.", file=sys.stderr)
        return 2
    from harness.judge.device import provenance
    from harness.megakernel.suite import VM_MODELS, VM_SCHEDULES

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    old = {} if args.fresh or not out.exists() else {r["id"]: r for r in json.loads(out.read_text())["rows"]}
    jobs = [] if args.only_1b else [(f"{n}/{i}", lambda n=n, i=i: small_row(n, i, args.steps, args.budget_s))
                                    for n in VM_MODELS for i in range(len(VM_SCHEDULES))]
    if not args.skip_1b:
        big = {}

        def weights():   # made once, on the device, when the first 1B-class row needs them
            from harness.megakernel.configs import PRESETS
            from harness.megakernel.executor_check import device_weights

            if "w" not in big:
                big["w"] = device_weights(PRESETS["llama-1b"], seed=0)
            return big["w"]

        for which in ("suite", "wide", "mid"):
            jobs.append((f"llama-1b/{which}", lambda which=which: large_row(which, min(args.steps, 6), args.budget_s,
                                                                             weights())))
        if not args.no_sweep:
            jobs.append(("llama-1b/sweep", lambda: sweep_row(args.budget_s, weights())))
    rows = []
    for job_id, job in jobs:
        if job_id in old and "error" not in old[job_id]:
            rows.append(old[job_id])
            continue
        try:
            row = job()
        except Exception as error:  # one configuration's failure is a row, not the end of the run
            row = {"model": job_id.split("/")[0], "error": f"{type(error).__name__}: {error}"}
        rows.append({"id": job_id, **row})
        out.write_text(json.dumps({"schema": "crucible.megakernel.gpu/1.0", "provenance": provenance("cuda"),
                                   "rows": rows}, indent=1))
        print(table(rows[-1:]).splitlines()[2], flush=True)
    print(table(rows))
    return 0 if all("error" not in r and r.get("correct", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
