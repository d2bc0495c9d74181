"""AutoMegaKernel IR 0.2 documents <-> Crucible schedules.

Tasks map one to one and keep AMK's ``"sm": null``: an imported document says ``"ops": "amk"``
(per-opcode checks against AMK's instruction set, ``amk_ops.py``) and ``"queues": "amk_loader"``
(SMs and queue order as AMK's loader makes them, ``placement.py``). What AMK lacks, write
regions, is derived on import from GEMV/GEMM tile params (columns ``[n_off, n_off + N_tile)`` of
the last dimension; for GEMM_TILE with ``m_off``/``M_tile`` also rows ``[m_off, m_off + M_tile)``
of the one before) and carried on export in ``meta.crucible_regions`` where params cannot
re-derive them. Export undoes every import addition, so ``dumps(to_amk(from_amk(d)))`` gives
back AMK's own bytes.
"""

from __future__ import annotations

import json

from harness.errors import UserError
from harness.megakernel import fastpath
from harness.megakernel.amk_ops import TILED
from harness.megakernel.format import FORMAT

AMK_IR_VERSION, AMK_ABI_VERSION = "0.2.0", "0.2"
_TASK_KEYS = ("id", "op", "inputs", "outputs", "out_counter", "waits", "params", "sm", "est_bytes",
              "est_flops", "label")
_IMPORTED = "amk"  # top-level key of an imported document: what import added, so export removes it


def from_amk(doc: dict) -> dict:
    """A Crucible document from an AMK IR document (major version 0)."""
    if not isinstance(doc, dict) or str(doc.get("ir_version", "")).split(".")[0] != "0":
        raise UserError(f"not an AutoMegaKernel IR 0.x document (ir_version {doc.get('ir_version') if isinstance(doc, dict) else None!r}); "
                        "AMK writes ir_version 0.2.0")
    meta = dict(doc.get("meta") or {})
    carried = meta.pop("crucible_regions", {})
    target = dict(doc.get("target") or {})
    added_resident = "max_resident" not in target
    target.setdefault("max_resident", target.get("num_sms"))
    buffers = doc.get("buffers") or []
    tasks = _tasks_from_amk(doc.get("tasks") or [], buffers, carried)
    imported = {"ir_version": doc.get("ir_version"), "abi_version": doc.get("abi_version", AMK_ABI_VERSION),
                "added_max_resident": added_resident, "had_regions": "crucible_regions" in (doc.get("meta") or {})}
    return {"format": FORMAT, "meta": meta, "target": target, "buffers": buffers,
            "counters": doc.get("counters") or [], "tasks": tasks, "pages": doc.get("pages"),
            "config": doc.get("config"), "ops": "amk", "queues": "amk_loader", _IMPORTED: imported}


def _tasks_from_amk(tasks: list, buffers: list, carried: dict) -> list:
    """Each task copied, with its regions: carried ones, else those its tile params give."""
    if not carried:
        imported = fastpath.tasks_from_amk(tasks, buffers, TILED)
        if imported is not None:
            return imported
    shapes = None
    out = []
    for task in tasks:
        if type(task) is not dict:
            out.append(task)  # the validator names it malformed
            continue
        copy = task.copy()
        regions = carried.get(str(task.get("id"))) if carried else None
        if regions is None and task.get("op") in TILED:
            if shapes is None:
                shapes = {b.get("id"): b.get("shape") for b in buffers if isinstance(b, dict)}
            regions = tile_regions(task, shapes)
        if regions:
            copy["regions"] = regions
        out.append(copy)
    return out


def tile_regions(task: dict, shapes: dict) -> list | None:
    """The box a GEMV/GEMM tile writes, from its params (None: whole buffer, as AMK reads it)."""
    params, outputs = task.get("params") or {}, task.get("outputs") or []
    if type(params) is not dict or type(outputs) is not list or len(outputs) != 1:
        return None
    lo, width = params.get("n_off"), params.get("N_tile")
    if not (type(lo) is int and type(width) is int):
        return None
    shape = shapes.get(outputs[0])
    if not isinstance(shape, list) or not shape:
        return None
    if len(shape) == 2:  # the common rank, without building the lists a general one needs
        box = [[0, shape[0]], [lo, lo + width]]
    else:
        box = [[0, d] for d in shape[:-1]] + [[lo, lo + width]]
    row, rows = params.get("m_off"), params.get("M_tile")
    if task.get("op") == "GEMM_TILE" and len(shape) >= 2 and type(row) is int and type(rows) is int:
        box[-2] = [row, row + rows]
    return [{"buffer": outputs[0], "box": box}]


def to_amk(doc: dict) -> dict:
    """An AMK IR 0.2 document; regions that tile params cannot re-derive travel in meta."""
    imported = doc.get(_IMPORTED) or {}
    shapes = {b["id"]: b["shape"] for b in doc["buffers"]}
    carried = {}
    tasks = []
    for task in doc["tasks"]:
        tasks.append(_task_to_amk(task))
        regions = task.get("regions")
        if regions and (task["op"] not in TILED or tile_regions(task, shapes) != regions):
            carried[str(task["id"])] = regions
    meta = dict(doc.get("meta") or {})
    if carried or imported.get("had_regions"):
        meta["crucible_regions"] = carried
    target = dict(doc["target"])
    if imported.get("added_max_resident") and target.get("max_resident") == target.get("num_sms"):
        target.pop("max_resident", None)
    counters = doc["counters"] if imported else [{"id": c["id"], "init": c.get("init", 0), "note": c.get("note", "")}
                                                   for c in doc["counters"]]
    return {"ir_version": imported.get("ir_version", AMK_IR_VERSION),
            "abi_version": imported.get("abi_version", AMK_ABI_VERSION), "meta": meta,
            "target": target, "buffers": doc["buffers"], "counters": counters,
            "tasks": tasks, "pages": doc.get("pages"), "config": doc.get("config")}


def _task_to_amk(task: dict) -> dict:
    out = {k: task.get(k, _default(k)) for k in _TASK_KEYS}
    for key, value in task.items():  # keys AMK wrote that we do not model travel back as they were
        if key not in out and key != "regions":
            out[key] = value
    return out


def _default(key: str):
    return {"waits": [], "params": {}, "est_bytes": 0, "est_flops": 0, "label": ""}.get(key)


def dumps(doc: dict) -> str:
    """An AMK document as AMK's own writer lays it out (compact separators, no newline)."""
    return json.dumps(doc, separators=(",", ":"))


def is_amk(doc) -> bool:
    """Whether a loaded schedule is an AMK IR document (imported by ``normalise``)."""
    return isinstance(doc, dict) and "ir_version" in doc and "format" not in doc


def normalise(doc):
    """Any loaded schedule as a Crucible document (AMK documents are imported)."""
    if is_amk(doc):
        return from_amk(doc)
    return doc
