"""Run a schedule as one persistent Triton kernel: one program per SM, counters in global memory.

``Megakernel(weights, device)`` holds one memory arena (weights, KV caches, activations) per buffer
layout; lowerings of one model at different positions share a layout, so a decode reuses the
arena and the caches persist across launches, as on the device they model. ``prepare(doc)`` checks
the schedule (the validator must accept it unless ``check=False``; a schedule that breaks the launch
contract is never run, since on the device that is truncation or an out-of-range access), packs it
and uploads its tables; ``Prepared.step(inputs)`` launches once and returns the outputs or the
deadlock verdict. The counters' spins are bounded (``spin_bound``): a schedule that deadlocks
stops every program and comes back as ``Launch.deadlock``, never as a hung GPU.

On the CPU the kernel runs in Triton's interpreter (``TRITON_INTERPRET=1``), which runs programs one
after another: a program that waits on a later program spins to its bound there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from harness.megakernel.executor_pack import I32, STATUS_FIELDS, ExecutorError, Packed, pack

DEFAULT_SPIN_BOUND = 1 << 20     # acquire loads before a wait is called a deadlock (about a second on a GPU)
CHECK_EVERY = 64                 # spins between looks at the abort flag


@dataclass
class Launch:
    outputs: dict = field(default_factory=dict)    # IO_OUTPUT name -> CPU tensor
    deadlock: dict | None = None                   # set when a spin reached its bound

    @property
    def ok(self) -> bool:
        return self.deadlock is None

    def logits(self):
        return self.outputs["logits"][0]

    def next_token(self) -> int:
        return int(self.outputs["next_token"][0])


class Megakernel:
    def __init__(self, weights: dict, device: str = "cuda", spin_bound: int = DEFAULT_SPIN_BOUND,
                 num_warps: int | None = None, blocks: dict | None = None):
        """``blocks`` overrides the kernel's block shapes (BLOCK, BN, BK, BD, BL; powers of two)."""
        import torch

        self.torch, self.device = torch, torch.device(device)
        self.weights, self.spin_bound = weights, int(spin_bound)
        self.num_warps = num_warps or (8 if self.device.type == "cuda" else 1)
        self.block_override = dict(blocks or {})
        self.arena = None
        self._signature = None
        self._saved_caches: dict[str, object] = {}

    # ------------------------------------------------------------------ schedules

    def prepare(self, doc: dict, check: bool = True, delays: dict[int, int] | None = None) -> "Prepared":
        from harness.megakernel.amk_io import normalise
        from harness.megakernel.validator import validate

        doc = normalise(doc)
        verdict = validate(doc)
        if verdict.family == "structural" or (check and not verdict.ok):
            raise ExecutorError(f"the executor refuses this schedule ({', '.join(verdict.classes)}): "
                                + ("it breaks the launch contract, which no flag can lift" if verdict.family == "structural"
                                   else "run `python -m harness schedules --check` on it for the witness"))
        packed = pack(_placed_as_amk_loads(doc), delays)
        self._check_resident(packed.programs)
        self._bind(doc, packed)
        return Prepared(self, packed, verdict)

    def _check_resident(self, programs: int) -> None:
        if self.device.type != "cuda":
            return
        sms = self.torch.cuda.get_device_properties(self.device).multi_processor_count
        if programs > sms:
            raise ExecutorError(f"the schedule has {programs} SM programs but this GPU has {sms} SMs: its programs "
                                "cannot all be resident; lower it for at most that many SMs")

    def _bind(self, doc: dict, packed: Packed) -> None:
        layout = packed.layout
        signature = json.dumps([doc["buffers"], doc.get("pages"), packed.programs], sort_keys=True)
        if signature == self._signature:
            return
        if self.arena is not None:
            self._save_caches()
        torch = self.torch
        self.f32 = torch.zeros(max(layout.f32_size, 1), dtype=torch.float32, device=self.device)
        self.i32 = torch.zeros(max(layout.i32_size, 1), dtype=torch.int32, device=self.device)
        for bid, source, shape in layout.weights:
            tensor = self.weights.get(source)
            if tensor is None or list(tensor.shape) != shape:
                raise ExecutorError(f"buffer {bid}: no weight {source!r} of shape {shape} was given")
            start = layout.offset[bid]
            self.f32[start:start + tensor.numel()].copy_(tensor.reshape(-1))
        for bid, key, shape in layout.caches:
            if key in self._saved_caches:
                self._cache(bid, shape, layout).copy_(self._saved_caches[key])
        self.arena, self.layout, self._signature = True, layout, signature

    def _cache(self, bid: int, shape: list[int], layout=None):
        start = (layout or self.layout).offset[bid]
        return self.f32[start:start + self.torch.Size(shape).numel()].view(shape)

    def _save_caches(self) -> None:
        for bid, key, shape in self.layout.caches:
            self._saved_caches[key] = self._cache(bid, shape).clone()

    def reset_caches(self) -> None:
        """Zero the KV caches (a new sequence)."""
        self._saved_caches.clear()
        if self.arena is not None:
            for bid, _, shape in self.layout.caches:
                self._cache(bid, shape).zero_()

    def poison_caches_from(self, pos: int) -> None:
        """NaN in every cache row at ``pos`` and after: rows this sequence has not written yet, which
        a safe schedule reads only after this step's append."""
        for bid, _, shape in self.layout.caches:
            self._cache(bid, shape)[pos:].fill_(float("nan"))

    def weight_view(self, source: str):
        """The arena's copy of one weight (eager baselines can share it instead of a second copy)."""
        for bid, name, shape in self.layout.weights:
            if name == source:
                start = self.layout.offset[bid]
                return self.f32[start:start + self.torch.Size(shape).numel()].view(shape)
        raise KeyError(source)


class Prepared:
    """One packed schedule on the device: its tables, counters and status rows."""

    def __init__(self, mk: Megakernel, packed: Packed, verdict):
        torch, device = mk.torch, mk.device
        self.mk, self.packed, self.verdict = mk, packed, verdict
        self.arena = mk.f32        # the arena its offsets index: another layout's prepare replaces it
        self.position = (packed.meta or {}).get("position")
        self.rows = torch.tensor(packed.rows or [[0]], dtype=torch.int64, device=device).reshape(-1)
        self.fparams = torch.tensor(packed.fparams or [[0.0]], dtype=torch.float32, device=device).reshape(-1)
        self.queue_start = torch.tensor(packed.queue_start, dtype=torch.int32, device=device)
        self.counters = torch.zeros(packed.counters + 1, dtype=torch.int32, device=device)
        self.flag = torch.zeros(1, dtype=torch.int32, device=device)
        self.status = torch.zeros(packed.programs * STATUS_FIELDS, dtype=torch.int32, device=device)
        self.blocks = {**_blocks(packed.dims, mk.device.type), **mk.block_override}

    def set_inputs(self, inputs: dict) -> None:
        for name, value in inputs.items():
            if name not in self.packed.layout.inputs:
                raise ExecutorError(f"the schedule has no IO input {name!r}; it has {sorted(self.packed.layout.inputs)}")
            start, dtype, size = self.packed.layout.inputs[name]
            arena = self.mk.i32 if dtype == I32 else self.mk.f32
            values = self.mk.torch.as_tensor(value, dtype=arena.dtype).reshape(-1)
            arena[start:start + size].copy_(values.to(arena.device))

    def poison(self) -> None:
        """NaN in every activation and float output, -1 in integer outputs, NaN in the cache rows from
        this step's position on: a read before a write shows."""
        if isinstance(self.position, int):
            self.mk.poison_caches_from(self.position)
        lo, hi = self.mk.layout.scratch
        self.mk.f32[lo:hi].fill_(float("nan"))
        lo, hi = self.mk.layout.i32_scratch
        self.mk.i32[lo:hi].fill_(-1)

    def launch(self) -> None:
        """One launch, asynchronous (what the benchmark times)."""
        from harness.megakernel.executor_kernel import megakernel

        if self.mk.f32 is not self.arena:
            raise ExecutorError("this prepared schedule's buffer layout is no longer loaded (a schedule with "
                                "another layout was prepared since); prepare it again")
        b = self.blocks
        megakernel[(self.packed.programs,)](
            self.mk.f32, self.mk.i32, self.rows, self.fparams, self.queue_start, self.counters,
            self.packed.counters, self.flag, self.status, self.mk.spin_bound,
            BLOCK=b["BLOCK"], BN=b["BN"], BK=b["BK"], BD=b["BD"], BL=b["BL"], CHECK_EVERY=CHECK_EVERY,
            num_warps=self.mk.num_warps)

    def step(self, inputs: dict, poison: bool = True) -> Launch:
        """One checked launch: inputs in, poison, launch, wait, outputs (or the deadlock) out."""
        self.set_inputs(inputs)
        if poison:
            self.poison()
        self.launch()
        if self.mk.device.type == "cuda":
            self.mk.torch.cuda.synchronize(self.mk.device)
        return Launch(self.outputs(), self._deadlock())

    def outputs(self) -> dict:
        result = {}
        for name, (start, dtype, shape) in self.packed.layout.outputs.items():
            arena = self.mk.i32 if dtype == I32 else self.mk.f32
            size = self.mk.torch.Size(shape).numel()
            result[name] = arena[start:start + size].view(shape).cpu().clone()
        return result

    def _deadlock(self) -> dict | None:
        if int(self.flag.item()) == 0:
            return None
        self.flag.zero_()
        self.counters.zero_()   # the last program out already did; a second reset costs nothing
        rows = self.status.view(-1, STATUS_FIELDS).cpu().tolist()
        starts = self.packed.queue_start
        stuck = [{"program": p, "task": row[1], "counter": row[2], "seen": row[3],
                  "finished": row[0], "queue": starts[p + 1] - starts[p]}
                 for p, row in enumerate(rows) if row[1] >= 0]
        return {"stuck": stuck, "spin_bound": self.mk.spin_bound,
                "unfinished_programs": sum(1 for p, row in enumerate(rows) if row[0] < starts[p + 1] - starts[p])}


def _pow2(n: int, low: int, high: int) -> int:
    size = low
    while size < n and size < high:
        size *= 2
    return size


def _blocks(dims: dict, device_type: str) -> dict:
    """Block shapes: powers of two that cover the schedule's sizes (loops take the rest). A GEMV
    block has as many rows as the narrowest tile (up to 64) and enough columns to keep 32-64 KB of
    weights in flight per step on a GPU, where one program per SM must pull its share of bandwidth.
    Shapes chosen so the kernel fits 8 warps on an SM without spills (ptxas, sm_90, Triton 3.6: 16x512
    and 64x256 take 186 and 254 registers a thread; with 3.9, 32x512 and 16x1024 spill)."""
    if device_type != "cuda":   # the interpreter: small blocks, less numpy work
        return {"BLOCK": _pow2(dims["vector"], 16, 64), "BN": 16, "BK": 16, "BD": _pow2(dims["head_dim"], 16, 256),
                "BL": 16}
    rows = _pow2(dims["gemv_n"] or 1, 16, 64)   # floors of 128 below: small models share one compile
    return {"BLOCK": _pow2(dims["vector"], 128, 1024), "BN": rows,
            "BK": min(_pow2(dims["gemv_k"], 128, 1024), 512 if rows == 16 else 256),
            "BD": _pow2(dims["head_dim"], 16, 256), "BL": 32}


def _placed_as_amk_loads(doc: dict) -> dict:
    """A schedule whose SMs AMK's loader assigns (AMK's IR leaves them null) runs as that loader
    would place and queue it; any other schedule runs as written."""
    from harness.megakernel.placement import needs_placement, placed, topological_order

    if not needs_placement(doc):
        return doc
    order, _ = topological_order(doc["tasks"])
    if order is None:
        raise ExecutorError("the schedule's dependencies form a cycle: AMK's loader refuses it, and so does the executor")
    return placed(doc, order)

