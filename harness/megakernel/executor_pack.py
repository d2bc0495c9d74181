"""Packing a schedule for the persistent executor: buffers laid out in one memory arena, tasks as
rows of an integer table, sorted by SM so that each program's queue is a contiguous run of rows.

Everything the device kernel indexes is resolved here, once, on the host: the element offset of
every operand (a shared-memory or register buffer gets one copy per SM, so a write on one SM is
invisible to the others, as on chip), the op's integer and float parameters, and the waits. Every
access an op will make is checked against its buffer's size here, so even a schedule run with the
validator off cannot read or write outside the arena; what it can still do is race or deadlock,
which is the point of running it.

Pure Python: the runner turns the lists into tensors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from harness.errors import UserError
from harness.megakernel.format import MAX_INPUTS, MAX_OUTPUTS, MAX_WAITS, ON_CHIP_SPACES

# Opcodes of the device kernel (executor_kernel.py uses the same numbers).
OPS = {"NOP": 0, "EMBED": 1, "RMSNORM": 2, "GEMV_TILE": 3, "ROPE": 4, "KV_APPEND": 5,
       "ATTENTION_TILE": 6, "SILU_MUL": 7, "SAMPLE_ARGMAX": 8, "ADD": 9}
NUM_PARAMS, NUM_FPARAMS = 8, 4
# Integer table columns.
C_OP, C_COUNTER, C_NWAITS, C_NIN, C_DELAY, C_ID = 0, 1, 2, 3, 4, 5
C_WAIT_COUNTER = 6
C_WAIT_THRESHOLD = C_WAIT_COUNTER + MAX_WAITS
C_IN = C_WAIT_THRESHOLD + MAX_WAITS
C_OUT = C_IN + MAX_INPUTS
C_PARAM = C_OUT + MAX_OUTPUTS
ROW = C_PARAM + NUM_PARAMS
STATUS_FIELDS = 4   # per program: rows finished, stuck task id (-1), its counter, the value it saw
F32, I32 = "F32", "I32"


class ExecutorError(UserError):
    """A schedule the executor cannot run (an op, dtype or shape it has no device code for)."""


@dataclass
class Layout:
    """Where every buffer lives. ``offset[b]`` is an element offset into the arena of the buffer's
    dtype; an on-chip buffer has one copy per SM at ``offset[b] + sm * per_sm[b]``."""

    offset: dict[int, int] = field(default_factory=dict)
    per_sm: dict[int, int] = field(default_factory=dict)
    f32_size: int = 0
    i32_size: int = 0
    weights: list[tuple[int, str, list[int]]] = field(default_factory=list)   # (buffer, source, shape)
    caches: list[tuple[int, str, list[int]]] = field(default_factory=list)    # (buffer, key, shape)
    inputs: dict[str, tuple[int, str, int]] = field(default_factory=dict)     # name -> (offset, dtype, numel)
    outputs: dict[str, tuple[int, str, list[int]]] = field(default_factory=dict)
    scratch: tuple[int, int] = (0, 0)        # f32 range poisoned before a checked launch
    i32_scratch: tuple[int, int] = (0, 0)


@dataclass
class Packed:
    rows: list[list[int]]            # one per task, grouped by SM in queue order
    fparams: list[list[float]]
    queue_start: list[int]           # program p runs rows [queue_start[p], queue_start[p + 1])
    programs: int
    counters: int
    layout: Layout
    task_ids: list[int]              # task id of each row
    dims: dict[str, int]             # largest sizes, for the kernel's block shapes
    meta: dict | None = None


def numel(shape: list[int]) -> int:
    return math.prod(shape)


def pack(doc: dict, delays: dict[int, int] | None = None) -> Packed:
    """The packed form of a document with every task on an SM. ``delays`` (task id -> spins) holds a
    task back after its waits hold; the safety demonstration uses it to make races show."""
    programs = 1 + max((t["sm"] for t in doc["tasks"] if isinstance(t.get("sm"), int)), default=0)
    layout = _layout(doc, programs)
    by_id = {b["id"]: b for b in doc["buffers"]}
    counters = {c["id"]: i for i, c in enumerate(doc["counters"])}
    ordered = sorted(doc["tasks"], key=lambda t: _sm_of(t))   # stable: queue order kept
    rows, fparams, dims = [], [], {"vector": 1, "head_dim": 1, "gemv_k": 1, "gemv_n": 0}
    for task in ordered:
        row, fp = _row(task, by_id, counters, layout, dims)
        row[C_DELAY] = int((delays or {}).get(task["id"], 0))
        rows.append(row)
        fparams.append(fp)
    starts = [0] * (programs + 1)
    for task in ordered:
        starts[task["sm"] + 1] += 1
    for p in range(programs):
        starts[p + 1] += starts[p]
    return Packed(rows, fparams, starts, programs, len(doc["counters"]), layout,
                  [t["id"] for t in ordered], dims, doc.get("meta"))


def _sm_of(task: dict) -> int:
    sm = task.get("sm")
    if type(sm) is not int or sm < 0:
        raise ExecutorError(f"task {task.get('id')} has sm {sm!r}: the executor needs every task placed on "
                            "an SM (AMK leaves SMs unassigned; place them first)")
    return sm


# ----------------------------------------------------------------------------- buffers


def _layout(doc: dict, programs: int) -> Layout:
    layout, pages = Layout(), doc.get("pages") or {}
    page_of = {int(b): p for b, p in (pages.get("buffer_to_page") or {}).items()}
    page_space = {p["id"]: p["space"] for p in pages.get("pages") or []}
    buffers = doc["buffers"]
    for buf in buffers:
        if buf["dtype"] not in (F32, I32):
            raise ExecutorError(f"buffer {buf['id']} ({buf['name']}) has dtype {buf['dtype']}: the executor "
                                "runs F32 and I32 buffers only; lower the schedule with F32 activations")
    for buf in buffers:   # weights, constants and caches first: the scratch range after them is contiguous
        if buf["kind"] in ("WEIGHT", "CONST"):
            layout.weights.append((buf["id"], buf["source"] or buf["name"], list(buf["shape"])))
            _place(layout, buf, numel(buf["shape"]))
        elif buf["kind"] == "KV_CACHE":
            layout.caches.append((buf["id"], buf["source"] or buf["name"], list(buf["shape"])))
            _place(layout, buf, numel(buf["shape"]))
        elif buf["kind"] == "IO_INPUT":
            layout.inputs[buf["name"]] = (_place(layout, buf, numel(buf["shape"])), buf["dtype"], numel(buf["shape"]))
    layout.scratch, layout.i32_scratch = (layout.f32_size, 0), (layout.i32_size, 0)
    _place_pages(layout, doc, page_of, page_space, programs)
    for buf in buffers:
        if buf["kind"] in ("ACTIVATION", "IO_OUTPUT") and buf["id"] not in layout.offset:
            copies = programs if buf["space"] in ON_CHIP_SPACES else 1
            size = numel(buf["shape"])
            layout.offset[buf["id"]] = _take(layout, buf["dtype"], size * copies)
            layout.per_sm[buf["id"]] = size if copies > 1 else 0
        if buf["kind"] == "IO_OUTPUT":
            layout.outputs[buf["name"]] = (layout.offset[buf["id"]], buf["dtype"], list(buf["shape"]))
    layout.scratch = (layout.scratch[0], layout.f32_size)
    layout.i32_scratch = (layout.i32_scratch[0], layout.i32_size)
    return layout


def _place(layout: Layout, buf: dict, size: int) -> int:
    layout.offset[buf["id"]] = _take(layout, buf["dtype"], size)
    layout.per_sm[buf["id"]] = 0
    return layout.offset[buf["id"]]


def _take(layout: Layout, dtype: str, size: int) -> int:
    if dtype == F32:
        start, layout.f32_size = layout.f32_size, layout.f32_size + size
    else:
        start, layout.i32_size = layout.i32_size, layout.i32_size + size
    return start


def _place_pages(layout: Layout, doc: dict, page_of: dict, page_space: dict, programs: int) -> None:
    """Buffers bound to one page share its memory: that is what makes a page race real."""
    members: dict[int, list[dict]] = {}
    for buf in doc["buffers"]:
        if buf["id"] in page_of and buf["id"] not in layout.offset:   # read-only and cache buffers keep their own
            members.setdefault(page_of[buf["id"]], []).append(buf)
    for page, bufs in sorted(members.items()):
        if any(b["dtype"] != F32 for b in bufs):
            raise ExecutorError(f"page {page} holds a non-F32 buffer: the executor pages F32 buffers only")
        size = max(numel(b["shape"]) for b in bufs)
        copies = programs if page_space.get(page) in ON_CHIP_SPACES else 1
        base = _take(layout, F32, size * copies)
        for buf in bufs:
            layout.offset[buf["id"]] = base
            layout.per_sm[buf["id"]] = size if copies > 1 else 0


# ----------------------------------------------------------------------------- tasks


def _row(task: dict, by_id: dict, counters: dict, layout: Layout, dims: dict) -> tuple[list[int], list[float]]:
    op = task["op"]
    if op not in OPS:
        raise ExecutorError(f"task {task['id']}: op {op} has no device code; the executor runs {', '.join(OPS)}")
    row, fp = [0] * ROW, [0.0] * NUM_FPARAMS
    row[C_OP], row[C_ID], row[C_NIN] = OPS[op], task["id"], len(task["inputs"])
    row[C_COUNTER] = counters[task["out_counter"]]
    row[C_NWAITS] = len(task["waits"])
    for j, wait in enumerate(task["waits"]):
        row[C_WAIT_COUNTER + j], row[C_WAIT_THRESHOLD + j] = counters[wait["counter"]], wait["threshold"]
    sm = task["sm"]
    for j, b in enumerate(task["inputs"]):
        row[C_IN + j] = layout.offset[b] + sm * layout.per_sm[b]
    for j, b in enumerate(task["outputs"]):
        row[C_OUT + j] = layout.offset[b] + sm * layout.per_sm[b]
    ints, floats = OP_PARAMS[op](task, _Shapes(task, by_id), dims)
    row[C_PARAM:C_PARAM + len(ints)] = ints
    fp[:len(floats)] = floats
    return row, fp


class _Shapes:
    """Operand sizes of one task, and the checks that keep its accesses inside them."""

    def __init__(self, task: dict, by_id: dict):
        self.task, self.by_id = task, by_id

    def param(self, name: str):
        value = self.task["params"].get(name)
        if type(value) not in (int, float) or isinstance(value, bool):
            raise ExecutorError(f"task {self.task['id']} ({self.task['op']}): parameter {name!r} is {value!r}; "
                                "the executor needs it as a number")
        return value

    def operands(self, n_in: tuple[int, ...], n_out: int) -> None:
        if len(self.task["inputs"]) not in n_in or len(self.task["outputs"]) != n_out:
            raise ExecutorError(f"task {self.task['id']} ({self.task['op']}) has {len(self.task['inputs'])} inputs "
                                f"and {len(self.task['outputs'])} outputs; the executor's {self.task['op']} takes "
                                f"{' or '.join(map(str, n_in))} and {n_out}")

    def buf(self, role: str, index: int) -> dict:
        return self.by_id[self.task[role][index]]

    def fits(self, role: str, index: int, needed: int, dtype: str = F32) -> None:
        buf = self.buf(role, index)
        if buf["dtype"] != dtype or numel(buf["shape"]) < needed:
            raise ExecutorError(f"task {self.task['id']} ({self.task['op']}): {role[:-1]} {index} "
                                f"({buf['name']}, {buf['dtype']} {buf['shape']}) must be {dtype} with at least "
                                f"{needed} elements for these parameters")


def _embed(task, s: _Shapes, dims):
    s.operands((2,), 1)
    hidden = s.param("hidden")
    table = s.buf("inputs", 1)
    vocab = table["shape"][0]
    s.fits("inputs", 0, 1, I32)
    s.fits("inputs", 1, vocab * hidden)
    s.fits("outputs", 0, hidden)
    dims["vector"] = max(dims["vector"], hidden)
    return [hidden, vocab], []


def _rmsnorm(task, s: _Shapes, dims):
    s.operands((2,), 1)
    hidden = s.param("hidden")
    for role, index in (("inputs", 0), ("inputs", 1), ("outputs", 0)):
        s.fits(role, index, hidden)
    dims["vector"] = max(dims["vector"], hidden)
    return [hidden], [float(s.param("eps"))]


def _gemv(task, s: _Shapes, dims):
    s.operands((2, 3), 1)
    k, width, lo = s.param("K"), s.param("N_tile"), s.param("n_off")
    if min(k, width) < 1 or lo < 0:
        raise ExecutorError(f"task {task['id']} (GEMV_TILE): K, N_tile must be positive and n_off >= 0")
    s.fits("inputs", 0, k)
    s.fits("inputs", 1, (lo + width) * k)
    s.fits("outputs", 0, lo + width)
    if len(task["inputs"]) == 3:
        s.fits("inputs", 2, lo + width)
    dims["gemv_k"] = max(dims["gemv_k"], k)
    dims["gemv_n"] = min(dims["gemv_n"] or width, width)   # the narrowest tile sets the block's rows
    return [k, width, lo], []


def _rope(task, s: _Shapes, dims):
    s.operands((1,), 1)
    d, heads, pos = s.param("head_dim"), s.param("n_heads"), s.param("pos")
    s.fits("inputs", 0, d * heads)
    s.fits("outputs", 0, d * heads)
    dims["vector"] = max(dims["vector"], d * heads)
    return [d, heads, pos], [float(s.param("theta"))]


def _kv_append(task, s: _Shapes, dims):
    s.operands((1,), 1)
    pos, width = s.param("pos"), s.param("width")
    stride = s.buf("outputs", 0)["shape"][-1]
    s.fits("inputs", 0, width)
    s.fits("outputs", 0, pos * stride + width)
    dims["vector"] = max(dims["vector"], width)
    return [pos, width, stride], []


def _attention(task, s: _Shapes, dims):
    s.operands((3,), 1)
    d, h0, h1 = s.param("head_dim"), s.param("h0"), s.param("h1")
    heads, kv_heads, length = s.param("n_heads"), s.param("n_kv_heads"), s.param("kv_len")
    stride = s.buf("inputs", 1)["shape"][-1]
    if heads % kv_heads or not 0 <= h0 < h1 <= heads:
        raise ExecutorError(f"task {task['id']} (ATTENTION_TILE): heads [{h0}, {h1}) of {heads} with "
                            f"{kv_heads} KV heads is not a valid head group")
    s.fits("inputs", 0, heads * d)
    for index in (1, 2):
        s.fits("inputs", index, (length - 1) * stride + kv_heads * d)
    s.fits("outputs", 0, h1 * d)
    dims["head_dim"] = max(dims["head_dim"], d)
    return [d, h0, h1, heads // kv_heads, length, stride], [float(s.param("scale"))]


def _silu_mul(task, s: _Shapes, dims):
    s.operands((2,), 1)
    lo, width = s.param("n_off"), s.param("N_tile")
    for role, index in (("inputs", 0), ("inputs", 1), ("outputs", 0)):
        s.fits(role, index, lo + width)
    return [lo, width], []


def _argmax(task, s: _Shapes, dims):
    s.operands((1,), 1)
    vocab = s.param("vocab")
    s.fits("inputs", 0, vocab)
    s.fits("outputs", 0, 1, I32)
    return [vocab], []


def _add(task, s: _Shapes, dims):
    s.operands((2,), 1)
    n = numel(s.buf("outputs", 0)["shape"])
    s.fits("inputs", 0, n)
    s.fits("inputs", 1, n)
    return [n], []


def _nop(task, s: _Shapes, dims):
    return [], []


OP_PARAMS = {"NOP": _nop, "EMBED": _embed, "RMSNORM": _rmsnorm, "GEMV_TILE": _gemv, "ROPE": _rope,
             "KV_APPEND": _kv_append, "ATTENTION_TILE": _attention, "SILU_MUL": _silu_mul,
             "SAMPLE_ARGMAX": _argmax, "ADD": _add}
