"""Reference VM: runs an accepted schedule task by task on the CPU in fp32 PyTorch.

Each launch starts with every activation and output poisoned (NaN, or -1 for integers), so a task
that reads before its producers wrote shows up in the logits. The order is random among the tasks
the counters allow: an SM whose queue head has all its waits satisfied is picked at random. KV
caches persist across launches, as on the device.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from harness.errors import UserError
from harness.megakernel.llama_ref import rms_norm, rotary
from harness.megakernel.validator import validate

_INT_DTYPES = {"I32", "I8", "U8", "BOOL", "I4"}


@dataclass
class StepResult:
    logits: torch.Tensor
    next_token: int
    order: list[int]


class ReferenceVM:
    def __init__(self, weights: dict[str, torch.Tensor]):
        self.weights = weights
        self.persistent: dict[str, torch.Tensor] = {}   # KV caches by source name

    def run(self, doc: dict, token: int, rng: random.Random, check: bool = True,
            prefix: list[int] = ()) -> StepResult:
        """One launch. Refuses schedules the validator rejects unless ``check`` is False.
        ``prefix`` (task ids) is run first, in that order, each when its counters allow it; this
        replays a witness interleaving of a rejected schedule to show what it computes."""
        if check:
            verdict = validate(doc)
            if not verdict.ok:
                raise UserError(f"the VM refuses a rejected schedule ({', '.join(verdict.classes)}); "
                                "run `python -m harness schedules --check` on it for the witness")
        mem = self._memory(doc, token)
        order = self._execute(doc, mem, rng, list(prefix))
        outputs = {b["name"]: mem[b["id"]] for b in doc["buffers"] if b["kind"] == "IO_OUTPUT"}
        return StepResult(outputs["logits"][0].clone(), int(outputs["next_token"][0]), order)

    def _memory(self, doc: dict, token: int) -> dict[int, torch.Tensor]:
        mem = {}
        for buf in doc["buffers"]:
            mem[buf["id"]] = self._bind(buf, token)
        return mem

    def _bind(self, buf: dict, token: int) -> torch.Tensor:
        kind, shape = buf["kind"], tuple(buf["shape"])
        if kind in ("WEIGHT", "CONST"):
            tensor = self.weights.get(buf["source"])
            if tensor is None or tuple(tensor.shape) != shape:
                raise UserError(f"buffer {buf['name']}: no weight {buf['source']!r} of shape {shape}")
            return tensor
        if kind == "KV_CACHE":
            return self.persistent.setdefault(buf["source"] or buf["name"], torch.zeros(shape))
        if kind == "IO_INPUT":
            return torch.full(shape, token, dtype=torch.int64)
        if buf["dtype"] in _INT_DTYPES:
            return torch.full(shape, -1, dtype=torch.int64)
        return torch.full(shape, float("nan"))

    def _execute(self, doc: dict, mem: dict, rng: random.Random, prefix: list[int]) -> list[int]:
        queues: dict[int, list[dict]] = {}
        for task in doc["tasks"]:
            queues.setdefault(task["sm"], []).append(task)
        heads = {sm: 0 for sm in queues}
        counters = {c["id"]: 0 for c in doc["counters"]}
        order = []
        while True:
            ready = [sm for sm, q in queues.items() if heads[sm] < len(q)
                     and all(counters[w["counter"]] >= w["threshold"] for w in q[heads[sm]]["waits"])]
            if not ready:
                break
            sm = _next_sm(queues, heads, ready, prefix, rng)
            task = queues[sm][heads[sm]]
            OPS[task["op"]](task, mem)
            counters[task["out_counter"]] += 1
            heads[sm] += 1
            order.append(task["id"])
        if len(order) != len(doc["tasks"]):
            raise UserError(f"schedule deadlocked after {len(order)} of {len(doc['tasks'])} tasks")
        return order


def _next_sm(queues, heads, ready, prefix, rng) -> int:
    if prefix:
        wanted = prefix.pop(0)
        for sm in ready:
            if queues[sm][heads[sm]]["id"] == wanted:
                return sm
        raise UserError(f"task {wanted} of the given order cannot start now")
    return rng.choice(ready)


# --------------------------------------------------------------------------- instructions

def _embed(task, mem):
    ids, table = (mem[b] for b in task["inputs"])
    mem[task["outputs"][0]][:] = table[ids]


def _rmsnorm(task, mem):
    x, weight = (mem[b] for b in task["inputs"])
    mem[task["outputs"][0]][:] = rms_norm(x, weight, task["params"]["eps"])


def _gemv_tile(task, mem):
    x, weight, *residual = (mem[b] for b in task["inputs"])
    p = task["params"]
    lo, hi = p["n_off"], p["n_off"] + p["N_tile"]
    tile = x @ weight[lo:hi].T
    if residual:
        tile = tile + residual[0][..., lo:hi]
    mem[task["outputs"][0]][..., lo:hi] = tile


def _rope(task, mem):
    p = task["params"]
    x = mem[task["inputs"][0]].view(1, p["n_heads"], p["head_dim"])
    mem[task["outputs"][0]][:] = rotary(x, torch.tensor([p["pos"]]), p["theta"]).reshape(1, -1)


def _kv_append(task, mem):
    mem[task["outputs"][0]][task["params"]["pos"]] = mem[task["inputs"][0]][0]


def _attention_tile(task, mem):
    q, k_cache, v_cache = (mem[b] for b in task["inputs"])
    p, out = task["params"], mem[task["outputs"][0]]
    d, group, length = p["head_dim"], p["n_heads"] // p["n_kv_heads"], p["kv_len"]
    for h in range(p["h0"], p["h1"]):
        kv = h // group
        keys, values = k_cache[:length, kv * d:(kv + 1) * d], v_cache[:length, kv * d:(kv + 1) * d]
        weights = torch.softmax(keys @ q[0, h * d:(h + 1) * d] * p["scale"], dim=0)
        out[0, h * d:(h + 1) * d] = weights @ values


def _silu_mul(task, mem):
    gate, up = (mem[b] for b in task["inputs"])
    lo, hi = task["params"]["n_off"], task["params"]["n_off"] + task["params"]["N_tile"]
    mem[task["outputs"][0]][..., lo:hi] = F.silu(gate[..., lo:hi]) * up[..., lo:hi]


def _argmax(task, mem):
    mem[task["outputs"][0]][0] = int(torch.argmax(mem[task["inputs"][0]][0]))


def _add(task, mem):
    a, b = (mem[x] for x in task["inputs"])
    mem[task["outputs"][0]][:] = a + b


OPS = {"EMBED": _embed, "RMSNORM": _rmsnorm, "GEMV_TILE": _gemv_tile, "ROPE": _rope,
       "KV_APPEND": _kv_append, "ATTENTION_TILE": _attention_tile, "SILU_MUL": _silu_mul,
       "SAMPLE_ARGMAX": _argmax, "ADD": _add}
