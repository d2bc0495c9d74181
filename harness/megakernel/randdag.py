"""Random small schedules: plausible producer/consumer DAGs with random noise.

Most waits are right (full thresholds on the counters of the tasks that wrote the inputs), and
then, with small probabilities, a wait is dropped, made partial or over-counted, counters are
shared, queue order is shuffled, buffers share pages or move to shared memory, and tiles overlap.
So the set holds both safe and unsafe schedules of every shape, without being built to be either.
"""

from __future__ import annotations

import random

from harness.megakernel.builder import ScheduleBuilder


def random_schedule(rng: random.Random) -> dict:
    sms = rng.randint(1, 4)
    b = ScheduleBuilder({"name": f"rand{sms}", "num_sms": sms, "max_resident": sms}, {"source": "random"})
    width = rng.choice([4, 8])
    readonly = [b.buffer("in", "IO_INPUT", [1, width]), b.buffer("w", "WEIGHT", [width, width], source="w")]
    written: list[tuple[int, int]] = []  # (buffer, task) pairs
    counter_of: list[int] = []
    plans = []
    for t in range(rng.randint(2, 10)):
        plans.append(_task_plan(b, rng, t, width, readonly, written, counter_of))
    _emit(b, rng, plans, counter_of, sms)
    _noise(b.doc, rng)
    return b.doc


def _task_plan(b, rng, t, width, readonly, written, counter_of) -> dict:
    reads = rng.sample(readonly, rng.randint(0, 1))
    if written:
        reads += [buf for buf, _ in rng.sample(written, min(len(written), rng.randint(1, 2)))]
    # Share the previous task's counter (a multi-producer join) only when this task does not read
    # what that task wrote: otherwise every full wait on the counter would wait on itself.
    previous = {buf for buf, task in written if task == t - 1}
    share = counter_of and not previous & set(reads) and rng.random() < 0.3
    counter_of.append(counter_of[-1] if share else b.counter(f"c{t}"))
    out, region = _output(b, rng, t, width, written)
    written.append((out, t))
    return {"reads": list(dict.fromkeys(reads)), "out": out, "region": region}


def _output(b, rng, t, width, written):
    roll = rng.random()
    tiled = [buf for buf, _ in written if b.doc["buffers"][buf]["name"].startswith("tiled")]
    if tiled and roll < 0.25:
        lo = rng.randrange(width)
        return rng.choice(tiled), [[0, 1], [lo, min(width, lo + rng.choice([1, 2, 4]))]]
    if roll < 0.4:
        return b.buffer(f"tiled{t}", "ACTIVATION", [1, width], space="GLOBAL_SCRATCH"), [[0, 1], [0, width // 2]]
    if roll < 0.5:
        return b.buffer(f"kv{t}", "KV_CACHE", [4, width]), [[1, 2], [0, width]]
    if roll < 0.6:
        return b.buffer(f"out{t}", "IO_OUTPUT", [1, width]), None
    return b.buffer(f"a{t}", "ACTIVATION", [1, width], space="GLOBAL_SCRATCH"), None


def _emit(b, rng, plans, counter_of, sms) -> None:
    writers: dict[int, set[int]] = {}
    for t, plan in enumerate(plans):
        writers.setdefault(plan["out"], set()).add(t)
    producers: dict[int, int] = {}
    for c in counter_of:
        producers[c] = producers.get(c, 0) + 1
    for t, plan in enumerate(plans):
        # Wait for the writers generated before this task; a writer generated later stays unordered
        # (a read-after-write race) unless the list order happens to serialise them.
        needed = {counter_of[w] for buf in plan["reads"] for w in writers.get(buf, ()) if w < t}
        waits = [(c, _threshold(rng, producers[c])) for c in sorted(needed) if rng.random() > 0.06]
        if rng.random() < 0.04:
            c = rng.choice(counter_of)
            waits.append((c, producers[c]))
        regions = {plan["out"]: plan["region"]} if plan["region"] else None
        b.task("OP", plan["reads"], [plan["out"]], counter_of[t], waits[:8], rng.randrange(sms),
               regions=regions, label=f"t{t}")


def _threshold(rng, n: int) -> int:
    roll = rng.random()
    if roll < 0.08:
        return rng.randint(1, n - 1) if n > 1 else n
    return n + 1 if roll < 0.10 else n


def _noise(doc: dict, rng: random.Random) -> None:
    tasks, acts = doc["tasks"], [x for x in doc["buffers"] if x["kind"] == "ACTIVATION"]
    if len(tasks) >= 2 and rng.random() < 0.12:
        i, j = rng.sample(range(len(tasks)), 2)
        tasks[i], tasks[j] = tasks[j], tasks[i]
    if len(acts) >= 2 and rng.random() < 0.2:
        a, c = rng.sample(acts, 2)
        doc["pages"] = {"buffer_to_page": {str(a["id"]): 0, str(c["id"]): 0},
                        "pages": [{"id": 0, "space": "GLOBAL_SCRATCH", "nbytes": 32}]}
    elif acts and rng.random() < 0.15:
        rng.choice(acts)["space"] = "SMEM"
