"""What the validator protects against, shown on the device.

Single-fault mutants of Llama lowerings (``mutations.py``) are validated; the ones it rejects for a
race or a deadlock run with the checks off, the ones it accepts run as they are, each as the second
decode step after a correct first one, with activations, outputs and unwritten cache rows poisoned.
A rejected race is given its best chance to show: the task the validator's witness names (the
writer a reader may miss; the accessors of one buffer of a shared page) is held back after its
waits, so whatever does not wait for it runs first. Outcomes: ``right`` (logits within tolerance and
the same greedy token as eager), ``wrong``, ``deadlock`` (the spin bound's flag), or, from the
sandbox, ``crashed``/``timeout``. Schedules that break the launch contract are never run.

The cases run in a child process (``run_sandboxed``): a fault there is a verdict on the case in
flight, and the rest go on in a fresh child.
"""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.megakernel.configs import ModelConfig, ScheduleConfig
from harness.megakernel.lowering import lower
from harness.megakernel.mutations import MUTATIONS
from harness.megakernel.validator import validate

POSITION = 1                       # the mutant is the second step: the cache has a row to read
HOLD_SPINS = 1 << 13               # ~5-10 ms on a GPU: far longer than any task of these models
SPIN_BOUND = 1 << 19
MAX_TRIALS = 16
PROMPT = (3, 7)
RUNNABLE = ("drop_wait", "partial_threshold", "raise_threshold", "wait_unproduced", "self_wait", "back_edge",
            "swap_queue", "move_sm", "overlap_region", "alias_page", "kv_unordered", "onchip_cross_sm",
            "retarget_counter")
# Races whose effect is physical in this executor: a missed write is read as poison, a page is one
# piece of memory, on-chip buffers are per SM. A ``waw`` verdict rests on the declared write regions;
# the executor writes what the op's parameters say, so a region-only overlap changes nothing there.
PHYSICAL_RACES = ("raw", "kv_before_append", "first_k_of_n", "onchip_cross_sm", "war_page",
                  "read_unwritten", "output_unwritten")


def cases(model: ModelConfig, schedules: list[ScheduleConfig], per_class: int = 2, seed: int = 0,
          classes: tuple[str, ...] = RUNNABLE, place=None) -> list[dict]:
    """The lowerings themselves, and per mutation class up to ``per_class`` rejected (race or
    deadlock) and ``per_class`` accepted mutants of each schedule. ``place(doc) -> doc`` re-places
    the lowerings first (Triton's interpreter needs queues that never wait on a later program)."""
    place = place or (lambda doc: doc)
    found = []
    for s_index, sched in enumerate(schedules):
        base, first = place(lower(model, sched, POSITION)), place(lower(model, sched, 0))
        found.append(_case(f"s{s_index}/lowering", "lowering", base, first))
        for name in classes:
            kept = {"rejected": 0, "accepted": 0}
            for attempt in range(12 * per_class):
                doc = copy.deepcopy(base)
                if not MUTATIONS[name](doc, random.Random(seed * 100_003 + attempt)):
                    break
                case = _case(f"s{s_index}/{name}/{attempt}", name, doc, first)
                side = "accepted" if case["accepted"] else "rejected"
                if case["family"] != "structural" and kept[side] < per_class:
                    kept[side] += 1
                    found.append(case)
                if min(kept.values()) >= per_class:
                    break
    return found


def _case(case_id: str, mutation: str, doc: dict, first_step: dict) -> dict:
    verdict = validate(doc)
    first = verdict.violations[0] if verdict.violations else None
    return {"id": case_id, "mutation": mutation, "doc": doc, "first_step": first_step,
            "accepted": verdict.ok, "family": first["family"] if first else None,
            "cls": first["class"] if first else None, "classes": verdict.classes,
            "trials": _trials(doc, first) if first and first["family"] == "race" else [{}]}


def _trials(doc: dict, violation: dict) -> list[dict]:
    """Which tasks to hold back, one dict (task id -> spins) per trial; a race shows if any trial
    shows it. For a reader that may miss a write: each writer of the buffer that its full waits and
    its queue do not put before it, one at a time (ops read less than the whole buffer, e.g. a SiLU
    tile reads two gate tiles' columns, so the witness's writer alone may not be one it reads)."""
    witness = violation.get("witness") or {}
    if "writer" in witness and "reader" in witness:
        writers = _unordered_writers(doc, witness["reader"], witness.get("buffer")) or [witness["writer"]]
        return [{w: HOLD_SPINS} for w in writers[:MAX_TRIALS]]
    if "writers" in witness:
        return [{w: HOLD_SPINS} for w in witness["writers"]]
    if "tasks" in witness and "buffers" in witness:   # a shared page: hold one buffer's readers back
        by_id = {t["id"]: t for t in doc["tasks"]}
        trials = []
        for group, buffer in zip(witness["tasks"], witness["buffers"]):
            readers = [t for t in group if buffer in by_id[t]["inputs"]]
            trials.append({t: HOLD_SPINS for t in readers or group})
        return trials
    return [{}]


def _unordered_writers(doc: dict, reader: int, buffer) -> list[int]:
    """Writers of ``buffer`` that the reader's full waits (threshold = all producers) and queue
    predecessors do not force before it; partial waits force nothing here, which can only add trials."""
    producers: dict[int, list[int]] = {}
    previous: dict[int, int] = {}
    last_on: dict[int, int] = {}
    for task in doc["tasks"]:
        producers.setdefault(task["out_counter"], []).append(task["id"])
        if task["sm"] in last_on:
            previous[task["id"]] = last_on[task["sm"]]
        last_on[task["sm"]] = task["id"]
    by_id = {t["id"]: t for t in doc["tasks"]}
    before, stack = set(), [reader]
    while stack:
        task = by_id[stack.pop()]
        preds = [previous[task["id"]]] if task["id"] in previous else []
        for wait in task["waits"]:
            made = producers.get(wait["counter"], [])
            preds += made if wait["threshold"] >= len(made) else []
        for p in preds:
            if p not in before:
                before.add(p)
                stack.append(p)
    return [t["id"] for t in doc["tasks"] if buffer in t["outputs"] and t["id"] != reader and t["id"] not in before]


def run_cases(model: ModelConfig, found: list[dict], device: str = "cuda", spin_bound: int = SPIN_BOUND,
              seed: int = 0, report=None) -> list[dict]:
    """Run every case in this process (the sandbox's child calls this)."""
    import torch

    from harness.megakernel.executor import Megakernel
    from harness.megakernel.executor_check import ATOL, RTOL
    from harness.megakernel.llama_ref import EagerLlama, init_weights

    weights = init_weights(model, seed)
    tokens = [p % model.vocab for p in PROMPT]
    expected = EagerLlama(model, weights)(torch.tensor(tokens))[-1]
    mk = Megakernel({k: v.to(device) for k, v in weights.items()}, device, spin_bound=spin_bound)
    outcomes = []
    for case in found:
        results = []
        for delays in case["trials"]:
            mk.reset_caches()
            first = mk.prepare(case["first_step"]).step({"token": tokens[0]})
            launch = mk.prepare(case["doc"], check=False, delays={int(k): v for k, v in delays.items()}).step(
                {"token": tokens[1]})
            results.append(_judge(launch, expected, first.ok, ATOL, RTOL))
        outcome = _worst(results)
        outcome.update({"id": case["id"], "trials": [r["outcome"] for r in results]})
        outcomes.append(outcome)
        if report:
            report(outcome)
    return outcomes


def _judge(launch, expected, first_ok: bool, atol: float, rtol: float) -> dict:
    import torch

    if not first_ok:
        return {"outcome": "setup_failed"}
    if not launch.ok:
        return {"outcome": "deadlock", "stuck": launch.deadlock["stuck"][:4]}
    got = launch.logits()
    right = bool(torch.allclose(got, expected, atol=atol, rtol=rtol)) and launch.next_token() == int(expected.argmax())
    err = float((got - expected).abs().max()) if not torch.isnan(got).any() else float("nan")
    return {"outcome": "right" if right else "wrong", "max_abs_err": err, "nan": bool(torch.isnan(got).any())}


def _worst(results: list[dict]) -> dict:
    """A race shows if any trial shows it."""
    for wanted in ("deadlock", "wrong", "setup_failed"):
        for result in results:
            if result["outcome"] == wanted:
                return dict(result)
    return dict(results[0])


# ----------------------------------------------------------------------------- the sandbox


def run_sandboxed(model: ModelConfig, found: list[dict], device: str = "cuda", timeout_s: float = 300.0,
                  spin_bound: int = SPIN_BOUND) -> list[dict]:
    """Run the cases in child processes; a child that dies or overruns costs only the case in flight."""
    by_id, done, remaining = {c["id"]: c for c in found}, {}, list(found)
    with tempfile.TemporaryDirectory(prefix="crucible-mk-safety-") as tmp:
        while remaining:
            src, out = Path(tmp) / "cases.json", Path(tmp) / "outcomes.jsonl"
            src.write_text(json.dumps({"model": model.to_dict(), "cases": remaining, "device": device,
                                       "spin_bound": spin_bound}))
            out.write_text("")
            failure = _child(src, out, timeout_s)
            for line in out.read_text().splitlines():
                outcome = json.loads(line)
                done[outcome["id"]] = outcome
            remaining = [c for c in remaining if c["id"] not in done]
            if failure and remaining:
                culprit = remaining.pop(0)
                done[culprit["id"]] = {"id": culprit["id"], "outcome": failure["outcome"], "detail": failure["detail"]}
            elif failure:
                break
    return [{**{k: by_id[i][k] for k in ("mutation", "accepted", "family", "cls", "classes")}, **done[i]}
            for i in by_id if i in done]


def _child(src: Path, out: Path, timeout_s: float) -> dict | None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH")]))
    try:
        done = subprocess.run([sys.executable, "-m", "harness.megakernel.executor_safety", str(src), str(out)],
                              capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        return {"outcome": "timeout", "detail": f"the child ran past {timeout_s:.0f} s"}
    if done.returncode:
        return {"outcome": "crashed", "detail": f"exit {done.returncode}: {done.stderr[-600:]}"}
    return None


def summarize(outcomes: list[dict]) -> dict:
    """Counts per verdict and class, and the three claims the demonstration makes."""
    table: dict[str, dict[str, int]] = {}
    for o in outcomes:
        key = "accepted" if o["accepted"] else f"{o['family']}/{o['cls']}"
        row = table.setdefault(key, {})
        row[o["outcome"]] = row.get(o["outcome"], 0) + 1
    accepted = [o for o in outcomes if o["accepted"]]
    deadlocks = [o for o in outcomes if o["family"] == "deadlock"]
    races = [o for o in outcomes if o["family"] == "race" and o["cls"] in PHYSICAL_RACES]
    return {"cases": len(outcomes), "by_verdict": table,
            "accepted_right": sum(o["outcome"] == "right" for o in accepted), "accepted": len(accepted),
            "deadlock_flagged": sum(o["outcome"] == "deadlock" for o in deadlocks), "deadlock_rejects": len(deadlocks),
            "race_shown": sum(o["outcome"] in ("wrong", "deadlock") for o in races), "race_rejects": len(races),
            "other_race_rejects": {o["id"]: o["outcome"] for o in outcomes
                                   if o["family"] == "race" and o["cls"] not in PHYSICAL_RACES}}


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[0]).read_text())
    model = ModelConfig.from_dict(spec["model"])
    with open(argv[1], "a") as sink:
        def report(outcome: dict) -> None:
            sink.write(json.dumps(outcome) + "\n")
            sink.flush()
        run_cases(model, spec["cases"], spec["device"], spec["spin_bound"], report=report)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
