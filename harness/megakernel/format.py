"""The Crucible megakernel schedule format (``crucible.megakernel/1.0``): constants and helpers.

A document is plain JSON (a dict). Per-SM queue order is the order of ``tasks`` filtered by
``sm``. A document imported from AutoMegaKernel (``"queues": "amk_loader"``) or with unassigned
SMs runs as AMK's loader places it instead (``placement.py``: SMs from the loader, queues in
topological order). Tiled writers may declare the box they write per output buffer in
``regions``; reads are whole-buffer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.errors import UserError

FORMAT = "crucible.megakernel/1.0"
FORMAT_NAME, FORMAT_MAJOR = "crucible.megakernel", 1

# Device ABI caps (AMK's ABI_MAX_*): more than this is silently truncated on the device.
MAX_INPUTS, MAX_OUTPUTS, MAX_WAITS, MAX_RANK = 8, 4, 8, 4

KINDS = ("WEIGHT", "ACTIVATION", "KV_CACHE", "IO_INPUT", "IO_OUTPUT", "CONST")
READ_ONLY_KINDS = frozenset({"WEIGHT", "CONST", "IO_INPUT"})
SPACES = ("HBM", "GLOBAL_SCRATCH", "SMEM", "REGISTER")
ON_CHIP_SPACES = frozenset({"SMEM", "REGISTER"})
DTYPES = ("F32", "F16", "BF16", "F8E4M3", "F8E5M2", "I32", "I8", "I4", "U8", "BOOL")


def queues(doc: dict) -> dict[int, list[int]]:
    """Task ids per SM, in queue order (the order of ``tasks`` filtered by ``sm``)."""
    result: dict[int, list[int]] = {}
    for task in doc["tasks"]:
        result.setdefault(task["sm"], []).append(task["id"])
    return result


def new_document(target: dict, meta: dict | None = None) -> dict:
    return {"format": FORMAT, "meta": dict(meta or {}), "target": dict(target), "buffers": [],
            "counters": [], "tasks": [], "pages": None, "config": None}


def canonical(doc: Any) -> str:
    """Stable text for hashing (corpus digests)."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


class ScheduleFileError(UserError):
    """A schedule file that is not a JSON object: empty, truncated, or not JSON."""


def parse(path: str | Path) -> dict:
    """Read a schedule file strictly: the JSON object in it, or a ScheduleFileError that says
    what is wrong and where (line and column)."""
    path = Path(path)
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        why = getattr(error, "strerror", None) or str(error)
        raise ScheduleFileError(f"{path}: cannot read the schedule ({why}); check the path") from None
    if not text.strip():
        raise ScheduleFileError(f"{path}: the file is empty; a schedule is a JSON object")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as error:
        early = error.pos >= len(text.rstrip()) or error.msg.startswith("Unterminated string")
        end = "; the file ends before the JSON does (truncated?)" if early else ""
        raise ScheduleFileError(f"{path}: not valid JSON: {error.msg} (line {error.lineno}, column "
                                f"{error.colno}){end}; fix the file or regenerate it") from None
    if not isinstance(doc, dict):
        raise ScheduleFileError(f"{path}: a schedule is a JSON object, the file holds a JSON "
                                f"{type(doc).__name__}")
    return doc


def load(path: str | Path) -> Any:
    """Read a schedule file (Crucible or AMK IR 0.2). JSON errors are the caller's verdict, so a
    file that is not JSON comes back as the raw text (the validator calls it malformed)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise UserError(f"{path}: cannot read the schedule ({error.strerror}); check the path") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


