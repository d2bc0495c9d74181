"""A corpus of our own in AutoMegaKernel's dialect: AMK IR 0.2 documents as AMK's tools write
them (``"sm": null``, AMK's ops and operands), scored against the exact oracle.

Sources: toy Llama lowerings rewritten into AMK's operand conventions (``lowering``), the same
with one fault (``mut/<fault>``: the general mutations plus AMK-specific ones, with a share of
tasks given SMs, as partly-assigned AMK programs have), and random task graphs over AMK's ops
(``random``). Deterministic in (seed, size). Models are small enough that the oracle explores
every interleaving, both as the loader places a schedule and with every task on its own SM, so
the counts are against the truth; a schedule the oracle could only sample is counted apart.
"""

from __future__ import annotations

import pickle
import random
from dataclasses import dataclass

from harness.megakernel.amk_io import to_amk
from harness.megakernel.amk_ops import OPS, PARAM_TYPES, TILED
from harness.megakernel.configs import ModelConfig, ScheduleConfig
from harness.megakernel.lowering import lower
from harness.megakernel.mutations import MUTATIONS

DEFAULT_SIZE, DEFAULT_SEED = 10_000, 41
MODELS = (ModelConfig(hidden=8, layers=1, heads=2, kv_heads=1, head_dim=4, intermediate=16, vocab=16, max_seq=8),
          ModelConfig(hidden=8, layers=1, heads=2, kv_heads=2, head_dim=4, intermediate=8, vocab=8, max_seq=8))
SHARES = {"lowering": 0.05, "mutant": 0.6, "random": 0.35}


@dataclass
class Item:
    id: str
    cls: str
    doc: dict  # an AMK IR document


def amk_lowering(model: ModelConfig, sched: ScheduleConfig, pos: int) -> dict:
    """A lowering as AMK writes one: ROPE reads the position, KV_APPEND reads the cache it
    appends to, attention names its window start, and no task has an SM."""
    doc = to_amk(lower(model, sched, pos))
    pos_id = len(doc["buffers"])
    doc["buffers"].append({"id": pos_id, "name": "pos", "kind": "IO_INPUT", "dtype": "I32", "shape": [1],
                           "space": "HBM", "source": None})
    for task in doc["tasks"]:
        task["sm"] = None
        if task["op"] == "ROPE":
            task["inputs"].append(pos_id)
        elif task["op"] == "KV_APPEND":
            task["inputs"].append(task["outputs"][0])
        elif task["op"] == "ATTENTION_TILE":
            task["params"]["kv_start"] = 0
    return doc


def _lowerings(rng: random.Random, count: int) -> list[tuple[str, bytes]]:
    pool = []
    for i in range(count):
        model = rng.choice(MODELS)
        sched = ScheduleConfig(num_sms=rng.choice((1, 2, 3, 4)), gemv_tile=0, attn_heads_per_task=0,
                               paging=rng.choice(("none", "graph_color")), smem_local=rng.random() < 0.2)
        pos = rng.randrange(model.max_seq)
        pool.append((f"{sched.name()}/pos{pos}", pickle.dumps(amk_lowering(model, sched, pos))))
    return pool


# --------------------------------------------------------------------------- AMK-specific faults

def _drop_param(doc, rng) -> bool:
    sites = [t for t in doc["tasks"] if OPS.get(t["op"], (0, 0, 0, ()))[3]]
    if not sites:
        return False
    task = rng.choice(sites)
    task["params"].pop(rng.choice(OPS[task["op"]][3]), None)
    return True


def _drop_operand(doc, rng) -> bool:
    sites = [t for t in doc["tasks"] if t["inputs"]]
    if not sites:
        return False
    task = rng.choice(sites)
    task["inputs"].pop(rng.randrange(len(task["inputs"])))
    return True


def _unknown_op(doc, rng) -> bool:
    rng.choice(doc["tasks"])["op"] = rng.choice(("MATMUL", "gemv_tile", "SCAN"))
    return True


def _skip_append(doc, rng) -> bool:
    """An append that no longer happens: readers then see the earlier steps' cache (safe)."""
    sites = [t for t in doc["tasks"] if t["op"] == "KV_APPEND"]
    if not sites:
        return False
    task = rng.choice(sites)
    task.update(op="NOP", inputs=[], outputs=[], params={})
    doc["meta"].get("crucible_regions", {}).pop(str(task["id"]), None)  # its box in the cache
    return True


def _tile_out_of_bounds(doc, rng) -> bool:
    sites = [t for t in doc["tasks"] if t["op"] in TILED]
    if not sites:
        return False
    task = rng.choice(sites)
    task["params"]["n_off"] += rng.randint(1, 64)
    return True


def _assign_some_sms(doc, rng) -> bool:
    """Some tasks given SMs (in range, or one outside the grid): the loader's other branch."""
    grid = doc["target"]["num_sms"]
    for task in rng.sample(doc["tasks"], max(1, len(doc["tasks"]) // rng.randint(2, 6))):
        task["sm"] = rng.randrange(grid + (1 if rng.random() < 0.2 else 0))
    return True


AMK_FAULTS = {"drop_param": _drop_param, "drop_operand": _drop_operand, "unknown_op": _unknown_op,
              "skip_append": _skip_append, "tile_out_of_bounds": _tile_out_of_bounds,
              "assign_some_sms": _assign_some_sms}
# general faults that need SMs to mean something are left out: AMK leaves them unassigned
GENERAL_FAULTS = sorted(set(MUTATIONS) - {"swap_queue", "move_sm", "not_co_resident"})


def _mutant(rng, pool, fault: str) -> dict | None:
    for _ in range(20):
        doc = pickle.loads(rng.choice(pool)[1])
        apply = AMK_FAULTS.get(fault) or MUTATIONS[fault]
        if apply(doc, rng):
            return doc
    return None


# --------------------------------------------------------------------------- random graphs

def random_amk(rng: random.Random, tasks: int | None = None) -> dict:
    """A random task graph over AMK's ops: right arity and params mostly, waits on earlier
    producers (full joins mostly, sometimes partial, missing or extra)."""
    n = tasks or rng.randint(2, 9)
    buffers = [{"id": 0, "name": "w", "kind": "WEIGHT", "dtype": "F32", "shape": [4, 4], "space": "HBM", "source": "w"},
               {"id": 1, "name": "tok", "kind": "IO_INPUT", "dtype": "I32", "shape": [1], "space": "HBM", "source": None},
               {"id": 2, "name": "kv", "kind": "KV_CACHE", "dtype": "F32", "shape": [8, 4], "space": "HBM", "source": "kv"}]
    counters, task_list, written = [], [], []
    for i in range(n):
        op = rng.choice(sorted(OPS))
        low, high, outs, required = OPS[op]
        out_ids = []
        for _ in range(outs):
            bid = len(buffers)
            kind = "IO_OUTPUT" if rng.random() < 0.15 else "ACTIVATION"
            buffers.append({"id": bid, "name": f"a{bid}", "kind": kind, "dtype": "F32", "shape": [1, 4],
                            "space": "SMEM" if rng.random() < 0.05 else "HBM", "source": None})
            out_ids.append(bid)
        if op == "KV_APPEND":
            out_ids = [2]
        ins = _random_inputs(rng, op, low, high, written)
        counter = i if rng.random() < 0.8 or not counters else rng.choice(counters)["id"]
        if counter == i:
            counters.append({"id": i, "init": 0, "note": f"c{i}"})
        task_list.append({"id": i, "op": op, "inputs": ins, "outputs": out_ids, "out_counter": counter,
                          "waits": _random_waits(rng, task_list), "params": _params(rng, required),
                          "sm": None, "est_bytes": rng.randrange(64), "est_flops": rng.randrange(64), "label": f"r{i}"})
        written += [(b, i) for b in out_ids]
    return {"ir_version": "0.2.0", "abi_version": "0.2", "meta": {"model": "random"},
            "target": {"name": "toy", "num_sms": rng.choice((1, 2, 4, 82))}, "buffers": buffers,
            "counters": counters, "tasks": task_list, "pages": None, "config": None}


def _random_inputs(rng, op, low, high, written) -> list[int]:
    count = rng.randint(low, high if high >= 0 else low + 2)
    ins = []
    for k in range(count):
        if op == "KV_APPEND" and k == 1 or op == "ATTENTION_TILE" and k in (1, 2):
            ins.append(2)
        elif k == 1 and op in ("RMSNORM", "LAYERNORM", "GEMV_TILE", "GEMM_TILE") or not written:
            ins.append(0)
        elif k == 0 and op == "EMBED" or k == 1 and op == "ROPE":
            ins.append(1)
        else:
            ins.append(rng.choice(written)[0])
    return ins


def _random_waits(rng, earlier: list[dict]) -> list[dict]:
    producers: dict[int, int] = {}
    for t in earlier:
        producers[t["out_counter"]] = producers.get(t["out_counter"], 0) + 1
    waits = []
    for counter in rng.sample(sorted(producers), min(len(producers), rng.randint(0, 3))):
        full = producers[counter]
        k = full if rng.random() < 0.85 else rng.randint(1, full + 1)
        waits.append({"counter": counter, "threshold": k})
    return waits


def _params(rng, required) -> dict:
    params = {}
    for key in required:
        kind = PARAM_TYPES.get(key)
        params[key] = rng.randint(0, 2) if kind == "i" else (1.0 if kind == "f" else [])
    if "N_tile" in params:
        params.update(N_tile=rng.choice((2, 4)), n_off=rng.choice((0, 2)), K=4)
    if "M_tile" in params:
        params.update(M_tile=1, m_off=0)
    return params


# --------------------------------------------------------------------------- the corpus

def build(seed: int = DEFAULT_SEED, size: int = DEFAULT_SIZE) -> list[Item]:
    rng = random.Random(seed)
    pool = _lowerings(rng, 64)
    faults = GENERAL_FAULTS + sorted(AMK_FAULTS)
    n_low, n_mut = int(size * SHARES["lowering"]), int(size * SHARES["mutant"])
    items = [Item(f"lowering/{i}:{pool[i % len(pool)][0]}", "lowering", pickle.loads(pool[i % len(pool)][1]))
             for i in range(n_low)]
    for i in range(n_mut):
        fault = faults[i % len(faults)]
        doc = _mutant(rng, pool, fault)
        if doc is not None:
            items.append(Item(f"mut/{fault}/{i}", f"mut/{fault}", doc))
    while len(items) < size:
        items.append(Item(f"random/{len(items)}", "random", random_amk(rng)))
    return items


def score(items: list[Item], max_states: int = 50_000, runs: int = 16) -> dict:
    """Confusion counts of the validator against the oracle, as placed by AMK's loader
    (``loader``) and under every placement (``any``), per corpus class and in all. Only verdicts
    the oracle reached exhaustively (or structurally) count; sampled ones are tallied apart."""
    from harness.megakernel import oracle
    from harness.megakernel.amk_io import normalise
    from harness.megakernel.loader_check import SAFE_ANY
    from harness.megakernel.validator import validate

    table: dict = {}
    mistakes: list[dict] = []
    for item in items:
        verdict = validate(item.doc)  # (AMK's document as written: the validator imports it where it must)
        truth = oracle.label(normalise(item.doc), max_states=max_states, runs=runs)
        _tally(table, item.cls, "loader", verdict.ok, truth["safe"], truth["mode"], mistakes, item)
        if "safe_any" in truth:
            _tally(table, item.cls, "any", verdict.safety == SAFE_ANY, truth["safe_any"], truth["mode_any"],
                   mistakes, item)
    return {"per_class": table, "all": _total(table), "mistakes": mistakes[:20]}


def _tally(table, cls, view, accepted, safe, mode, mistakes, item) -> None:
    row = table.setdefault(cls, {}).setdefault(view, {"n": 0, "true_accept": 0, "true_reject": 0,
                                                       "false_accept": 0, "false_reject": 0, "sampled": 0})
    row["n"] += 1
    if mode == "sampled":
        row["sampled"] += 1
        return
    key = ("true_" if accepted == safe else "false_") + ("accept" if accepted else "reject")
    row[key] += 1
    if accepted != safe:
        mistakes.append({"id": item.id, "view": view, "accepted": accepted, "safe": safe})


def _total(table: dict) -> dict:
    total: dict = {}
    for views in table.values():
        for view, row in views.items():
            into = total.setdefault(view, dict.fromkeys(row, 0))
            for key, value in row.items():
                into[key] += value
    return total
