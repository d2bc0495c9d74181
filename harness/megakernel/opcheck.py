"""The validator's per-opcode pass for documents in AMK's dialect (see ``amk_ops.py``).

Runs on a document whose references already resolved (``structure.compile_document`` passed),
so every buffer id it meets exists. Each problem is a ``bad_op`` violation naming the task, the
op and what is wrong.
"""

from __future__ import annotations

from harness.megakernel.amk_ops import (INT32_MAX, INT32_MIN, INTEGER_DTYPES, KV_WRITERS, OPERAND_RULES,
                                        OPS, PARAM_TYPES, WEIGHT_KINDS)
from harness.megakernel.structure import violation

_LIMIT = 8


def op_findings(doc: dict) -> list[dict]:
    """``bad_op`` violations of every task of ``doc`` (at most a few kept, the rest counted)."""
    kinds = {b["id"]: (b["kind"], b["dtype"]) for b in doc["buffers"]}
    found: list[dict] = []
    more = 0
    for task in doc["tasks"]:
        problem = _problem(task, kinds)
        if problem is None:
            continue
        if len(found) < _LIMIT:
            tid, op = task["id"], task["op"]
            found.append(violation("bad_op", "structural", f"task {tid} ({op}): {problem}; AMK's loader "
                                   "refuses the program", task=tid, op=op, problem=problem))
        else:
            more += 1
    if more:
        found.append(violation("bad_op", "structural", f"... and {more} more tasks with bad ops"))
    return found


def _problem(task: dict, kinds: dict) -> str | None:
    op = task["op"]
    spec = OPS.get(op)
    if spec is None:
        return f"unknown op {op!r} (AMK's ops: {', '.join(sorted(OPS))})"
    low, high, outs, required = spec
    ins, written = task["inputs"], task["outputs"]
    if len(ins) < low or (high >= 0 and len(ins) > high):
        return f"{len(ins)} inputs, the op takes {low}..{'8' if high < 0 else high}"
    if len(written) != outs:
        return f"{len(written)} outputs, the op writes {outs}"
    params = task.get("params") or {}
    for key in required:
        if key not in params:
            return f"missing parameter {key!r}"
    for key, value in params.items():
        problem = _param_problem(key, value)
        if problem:
            return problem
    return _operand_problem(op, ins, written, kinds)


def _param_problem(key, value) -> str | None:
    kind = PARAM_TYPES.get(key)
    if kind == "i" and not (type(value) is int and INT32_MIN <= value <= INT32_MAX):
        return f"parameter {key}={value!r} must be an int32"
    if kind == "f" and type(value) not in (int, float):
        return f"parameter {key}={value!r} must be a real number"
    return None


def _operand_problem(op: str, ins: list, written: list, kinds: dict) -> str | None:
    for side, position, need in OPERAND_RULES.get(op, ()):
        operands = ins if side == "in" else written
        if position >= len(operands):
            continue
        kind, dtype = kinds[operands[position]]
        if need == "int" and dtype not in INTEGER_DTYPES:
            return f"{side}put {position} (buffer {operands[position]}) must have an integer dtype, not {dtype}"
        if need == "weight" and kind not in WEIGHT_KINDS:
            return f"input {position} (buffer {operands[position]}) must be a WEIGHT or CONST, not {kind}"
        if need == "kv" and kind != "KV_CACHE":
            return f"{side}put {position} (buffer {operands[position]}) must be a KV_CACHE, not {kind}"
    if op not in KV_WRITERS:
        for b in written:
            if kinds[b][0] == "KV_CACHE":
                return f"writes KV cache {b}; only KV_APPEND may write a KV cache"
    return None
