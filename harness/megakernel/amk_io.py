"""AutoMegaKernel IR 0.2 documents <-> Crucible schedules.

AMK keeps per-SM queue order as task-list order, as Crucible does, so tasks map one to one. What AMK
lacks, write regions, is derived on import from GEMV/GEMM tile params (a tile writes
``out[..., n_off:n_off+N_tile]``) and carried on export in ``meta.crucible_regions`` so a round trip
is exact. AMK's unassigned SM (``null``) stays null and is rejected by the validator: it cannot run.
"""

from __future__ import annotations

from harness.errors import UserError
from harness.megakernel.format import FORMAT

AMK_IR_VERSION, AMK_ABI_VERSION = "0.2.0", "0.2"
_TASK_KEYS = ("id", "op", "inputs", "outputs", "out_counter", "waits", "params", "sm", "est_bytes",
              "est_flops", "label")
_TILED = {"GEMV_TILE", "GEMM_TILE"}


def from_amk(doc: dict) -> dict:
    """A Crucible document from an AMK IR document (major version 0)."""
    if not isinstance(doc, dict) or str(doc.get("ir_version", "")).split(".")[0] != "0":
        raise UserError(f"not an AutoMegaKernel IR 0.x document (ir_version {doc.get('ir_version') if isinstance(doc, dict) else None!r})")
    meta = dict(doc.get("meta") or {})
    carried = meta.pop("crucible_regions", {})
    target = dict(doc.get("target") or {})
    target.setdefault("max_resident", target.get("num_sms"))
    buffers = doc.get("buffers") or []
    shapes = {b.get("id"): b.get("shape") for b in buffers if isinstance(b, dict)}
    tasks = [_task_from_amk(t, shapes, carried) for t in doc.get("tasks") or []]
    meta["imported_from"] = f"amk-ir {doc.get('ir_version')}"
    return {"format": FORMAT, "meta": meta, "target": target, "buffers": buffers,
            "counters": doc.get("counters") or [], "tasks": tasks, "pages": doc.get("pages"),
            "config": doc.get("config")}


def _task_from_amk(task, shapes: dict, carried: dict):
    if not isinstance(task, dict):
        return task  # the validator names it malformed
    out = {k: task[k] for k in _TASK_KEYS if k in task}
    regions = carried.get(str(task.get("id")))
    if regions is None and task.get("op") in _TILED:
        regions = _tile_regions(task, shapes)
    if regions:
        out["regions"] = regions
    return out


def _tile_regions(task: dict, shapes: dict) -> list | None:
    params, outputs = task.get("params") or {}, task.get("outputs") or []
    lo, width = params.get("n_off"), params.get("N_tile")
    if not (isinstance(lo, int) and isinstance(width, int) and len(outputs) == 1):
        return None
    shape = shapes.get(outputs[0])
    if not isinstance(shape, list) or not shape:
        return None
    box = [[0, d] for d in shape[:-1]] + [[lo, lo + width]]
    return [{"buffer": outputs[0], "box": box}]


def to_amk(doc: dict) -> dict:
    """An AMK IR 0.2 document; regions that tile params cannot re-derive travel in meta."""
    shapes = {b["id"]: b["shape"] for b in doc["buffers"]}
    carried = {}
    tasks = []
    for task in doc["tasks"]:
        tasks.append({k: task.get(k, _default(k)) for k in _TASK_KEYS})
        regions = task.get("regions")
        if regions and (task["op"] not in _TILED or _tile_regions(task, shapes) != regions):
            carried[str(task["id"])] = regions
    meta = dict(doc.get("meta") or {})
    if carried:
        meta["crucible_regions"] = carried
    return {"ir_version": AMK_IR_VERSION, "abi_version": AMK_ABI_VERSION, "meta": meta,
            "target": doc["target"], "buffers": doc["buffers"],
            "counters": [{"id": c["id"], "init": c.get("init", 0), "note": c.get("note", "")} for c in doc["counters"]],
            "tasks": tasks, "pages": doc.get("pages"), "config": doc.get("config")}


def _default(key: str):
    return {"waits": [], "params": {}, "est_bytes": 0, "est_flops": 0, "label": ""}.get(key)


def normalise(doc):
    """Any loaded schedule as a Crucible document (AMK documents are imported)."""
    if isinstance(doc, dict) and "ir_version" in doc and "format" not in doc:
        return from_amk(doc)
    return doc
