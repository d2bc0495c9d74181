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


# op -> (min inputs, max inputs, outputs, required params as a set, has operand rules)
_QUICK = {op: (low, 8 if high < 0 else high, outs, frozenset(req), op in OPERAND_RULES)
          for op, (low, high, outs, req) in OPS.items()}


def op_findings(doc: dict) -> list[dict]:
    """``bad_op`` violations of every task of ``doc`` (at most a few kept, the rest counted)."""
    if _all_fine(doc):
        return []
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


def _all_fine(doc: dict, type=type, len=len, int=int, float=float) -> bool:
    """The common case in one loop: True when no task breaks a rule; False at the first doubt
    (``_problem`` then says what is wrong, more slowly)."""
    quick, types, kv_writers = _QUICK, PARAM_TYPES, KV_WRITERS
    kinds = None
    for task in doc["tasks"]:
        op = task["op"]
        spec = quick.get(op)
        if spec is None:
            return False
        ins, written, params = task["inputs"], task["outputs"], task.get("params") or {}
        if not spec[0] <= len(ins) <= spec[1] or len(written) != spec[2] or not params.keys() >= spec[3]:
            return False
        for key, value in params.items():
            kind = types.get(key)
            if kind == "i":
                if type(value) is not int or not INT32_MIN <= value <= INT32_MAX:
                    return False
            elif kind == "f" and type(value) is not float and type(value) is not int:
                return False
        if spec[4] or (written and op not in kv_writers):
            if kinds is None:
                kinds = {b["id"]: (b["kind"], b["dtype"]) for b in doc["buffers"]}
            if _operand_problem(op, ins, written, kinds):
                return False
    return True


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
