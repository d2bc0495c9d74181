"""Single-fault mutations of schedules, one function per fault class.

Each takes a document (already a private copy) and a ``random.Random`` and changes it in place,
returning False when the document has no site for that fault. Whether the result is unsafe is the
oracle's call, not the mutation's: dropping a redundant wait or swapping two independent tasks
gives a safe schedule, and those are exactly the cases that expose false rejects.
"""

from __future__ import annotations

import random
from typing import Callable

from harness.megakernel.format import MAX_INPUTS, MAX_WAITS, READ_ONLY_KINDS

Mutation = Callable[[dict, random.Random], bool]
MUTATIONS: dict[str, Mutation] = {}


def mutation(name: str):
    def register(fn: Mutation) -> Mutation:
        MUTATIONS[name] = fn
        return fn
    return register


def _producers(doc: dict) -> dict[int, int]:
    counts: dict[int, int] = {}
    for task in doc["tasks"]:
        counts[task["out_counter"]] = counts.get(task["out_counter"], 0) + 1
    return counts


def _waits(doc: dict, keep=lambda task, wait: True) -> list[tuple[dict, dict]]:
    return [(t, w) for t in doc["tasks"] for w in t["waits"] if keep(t, w)]


def _new_counter(doc: dict, note: str) -> int:
    cid = max((c["id"] for c in doc["counters"]), default=-1) + 1
    doc["counters"].append({"id": cid, "init": 0, "note": note})
    return cid


@mutation("drop_wait")
def drop_wait(doc, rng) -> bool:
    sites = _waits(doc)
    if not sites:
        return False
    task, wait = rng.choice(sites)
    task["waits"].remove(wait)
    return True


@mutation("partial_threshold")
def partial_threshold(doc, rng) -> bool:
    counts = _producers(doc)
    sites = _waits(doc, lambda t, w: counts.get(w["counter"], 0) >= 2)
    if not sites:
        return False
    _, wait = rng.choice(sites)
    wait["threshold"] = rng.randint(1, counts[wait["counter"]] - 1)
    return True


@mutation("raise_threshold")
def raise_threshold(doc, rng) -> bool:
    sites = _waits(doc)
    if not sites:
        return False
    _, wait = rng.choice(sites)
    wait["threshold"] = _producers(doc).get(wait["counter"], 0) + rng.randint(1, 2)
    return True


@mutation("wait_unproduced")
def wait_unproduced(doc, rng) -> bool:
    if not doc["tasks"]:
        return False
    task = rng.choice(doc["tasks"])
    counter = _new_counter(doc, "nobody increments this")
    if task["waits"] and rng.random() < 0.5:
        rng.choice(task["waits"])["counter"] = counter
    elif len(task["waits"]) < MAX_WAITS:
        task["waits"].append({"counter": counter, "threshold": 1})
    else:
        return False
    return True


@mutation("self_wait")
def self_wait(doc, rng) -> bool:
    sites = [t for t in doc["tasks"] if len(t["waits"]) < MAX_WAITS]
    if not sites:
        return False
    task = rng.choice(sites)
    task["waits"].append({"counter": task["out_counter"], "threshold": _producers(doc)[task["out_counter"]]})
    return True


@mutation("back_edge")
def back_edge(doc, rng) -> bool:
    tasks = doc["tasks"]
    if len(tasks) < 2:
        return False
    i, j = sorted(rng.sample(range(len(tasks)), 2))
    if len(tasks[i]["waits"]) >= MAX_WAITS:
        return False
    counter = tasks[j]["out_counter"]
    tasks[i]["waits"].append({"counter": counter, "threshold": _producers(doc)[counter]})
    return True


def _sm_positions(doc: dict) -> dict[int, list[int]]:
    positions: dict[int, list[int]] = {}
    for index, task in enumerate(doc["tasks"]):
        positions.setdefault(task["sm"], []).append(index)
    return positions


@mutation("swap_queue")
def swap_queue(doc, rng) -> bool:
    queues = [q for q in _sm_positions(doc).values() if len(q) >= 2]
    if not queues:
        return False
    queue = rng.choice(queues)
    a = rng.randrange(len(queue) - 1)
    b = a + 1 if rng.random() < 0.6 else rng.randrange(a + 1, len(queue))
    tasks = doc["tasks"]
    tasks[queue[a]], tasks[queue[b]] = tasks[queue[b]], tasks[queue[a]]
    return True


@mutation("move_sm")
def move_sm(doc, rng) -> bool:
    sms = doc["target"]["num_sms"]
    if sms < 2 or not doc["tasks"]:
        return False
    task = rng.choice(doc["tasks"])
    task["sm"] = rng.choice([s for s in range(sms) if s != task["sm"]])
    return True


@mutation("sm_out_of_range")
def sm_out_of_range(doc, rng) -> bool:
    if not doc["tasks"]:
        return False
    rng.choice(doc["tasks"])["sm"] = rng.choice([-1, doc["target"]["num_sms"] + rng.randrange(3)])
    return True


@mutation("not_co_resident")
def not_co_resident(doc, rng) -> bool:
    used = len({t["sm"] for t in doc["tasks"]})
    if used < 2:
        return False
    doc["target"]["max_resident"] = rng.randint(1, used - 1)
    return True


@mutation("dangling_ref")
def dangling_ref(doc, rng) -> bool:
    if not doc["tasks"]:
        return False
    task = rng.choice(doc["tasks"])
    missing_buffer = max((b["id"] for b in doc["buffers"]), default=-1) + 1 + rng.randrange(3)
    missing_counter = max((c["id"] for c in doc["counters"]), default=-1) + 1 + rng.randrange(3)
    choice = rng.randrange(3)
    if choice == 0 and task["inputs"]:
        task["inputs"][rng.randrange(len(task["inputs"]))] = missing_buffer
    elif choice == 1 and task["waits"]:
        rng.choice(task["waits"])["counter"] = missing_counter
    else:
        task["out_counter"] = missing_counter
    return True


@mutation("exceed_caps")
def exceed_caps(doc, rng) -> bool:
    sites = [t for t in doc["tasks"] if t["waits"] or t["inputs"]]
    if not sites:
        return False
    task = rng.choice(sites)
    if task["waits"] and rng.random() < 0.5:
        task["waits"].extend(dict(rng.choice(task["waits"])) for _ in range(MAX_WAITS + 1 - len(task["waits"])))
    elif task["inputs"]:
        task["inputs"].extend(rng.choice(task["inputs"]) for _ in range(MAX_INPUTS + 1 - len(task["inputs"])))
    else:
        return False
    return True


@mutation("overlap_region")
def overlap_region(doc, rng) -> bool:
    shapes = {b["id"]: b["shape"] for b in doc["buffers"]}
    sites = [(r["box"], k, shapes[r["buffer"]][k]) for t in doc["tasks"] for r in t.get("regions") or []
             for k, (lo, hi) in enumerate(r["box"]) if hi - lo < shapes[r["buffer"]][k]]
    if not sites:
        return False
    box, k, dim = rng.choice(sites)
    lo, hi = box[k]
    grow_down = lo > 0 and (hi >= dim or rng.random() < 0.5)
    box[k] = [lo - 1, hi] if grow_down else [lo, hi + 1]
    return True


def _activations(doc: dict) -> list[dict]:
    return [b for b in doc["buffers"] if b["kind"] == "ACTIVATION"]


@mutation("alias_page")
def alias_page(doc, rng) -> bool:
    acts = _activations(doc)
    spaces = {}
    for buf in acts:
        spaces.setdefault(buf.get("space", "HBM"), []).append(buf)
    groups = [g for g in spaces.values() if len(g) >= 2]
    if not groups:
        return False
    a, b = rng.sample(rng.choice(groups), 2)
    pages = doc["pages"] or {"buffer_to_page": {}, "pages": []}
    doc["pages"] = pages
    page = pages["buffer_to_page"].get(str(a["id"]))
    if page is None:
        page = max((p["id"] for p in pages["pages"]), default=-1) + 1
        pages["pages"].append({"id": page, "space": a.get("space", "HBM"), "nbytes": 0})
        pages["buffer_to_page"][str(a["id"])] = page
    pages["buffer_to_page"][str(b["id"])] = page
    return True


@mutation("kv_unordered")
def kv_unordered(doc, rng) -> bool:
    kv = {b["id"] for b in doc["buffers"] if b["kind"] == "KV_CACHE"}
    appenders = {t["out_counter"] for t in doc["tasks"] if kv & set(t["outputs"])}
    sites = _waits(doc, lambda t, w: kv & set(t["inputs"]) and w["counter"] in appenders)
    if not sites:
        return False
    task, wait = rng.choice(sites)
    task["waits"].remove(wait)
    return True


@mutation("onchip_cross_sm")
def onchip_cross_sm(doc, rng) -> bool:
    users: dict[int, set[int]] = {}
    for task in doc["tasks"]:
        for bid in task["inputs"] + task["outputs"]:
            users.setdefault(bid, set()).add(task["sm"])
    sites = [b for b in _activations(doc) if len(users.get(b["id"], ())) >= 2]
    if not sites:
        return False
    buf = rng.choice(sites)
    buf["space"] = "SMEM"
    if doc["pages"]:
        doc["pages"]["buffer_to_page"].pop(str(buf["id"]), None)
    return True


@mutation("write_readonly")
def write_readonly(doc, rng) -> bool:
    readonly = [b["id"] for b in doc["buffers"] if b["kind"] in READ_ONLY_KINDS]
    sites = [t for t in doc["tasks"] if t["outputs"]]
    if not readonly or not sites:
        return False
    task = rng.choice(sites)
    index = rng.randrange(len(task["outputs"]))
    old = task["outputs"][index]
    task["outputs"][index] = rng.choice(readonly)
    task["regions"] = [r for r in task.get("regions") or [] if r["buffer"] != old] or None
    return True


@mutation("retarget_counter")
def retarget_counter(doc, rng) -> bool:
    if len(doc["counters"]) < 2 or not doc["tasks"]:
        return False
    task = rng.choice(doc["tasks"])
    task["out_counter"] = rng.choice([c["id"] for c in doc["counters"] if c["id"] != task["out_counter"]])
    return True


def mutate(doc: dict, name: str, rng: random.Random) -> bool:
    return MUTATIONS[name](doc, rng)
