"""The validator's optional native fast path (``_mkfast.c``, built by ``pip install -e .``).

It answers only what it can prove and says None otherwise, so the pure-Python code stays the
definition and decides every other case:

- ``tasks_from_amk``: ``amk_io``'s task import (copies with tile regions) in one native loop;
- ``judge``: whether a document the loader places (imported, or still as AMK wrote it: then
  read as the import would make it, tile regions from params) is ``safe_any_placement`` as the
  Python validator would judge it, for the common shape (ids equal to positions, no pages, no on-chip
  buffers, full waits whose producers are listed first): then (tasks, counters, grid); or
  whether the Python validator is certain to call it unsafe (a structural violation or bad op it
  reads the same way, a wait no placement can meet, a dependency cycle, a race with every task on
  an SM of its own when the grid has one for each, a read that can miss a write where the loader
  places the tasks): then False, and the verdict's violations are
  worked out in Python when first read (``validator.Verdict.proven_unsafe``); else None.

Without a C compiler the extension is not built and everything runs in Python, with the same
verdicts (tested on the fixtures and a corpus sample with the fast path on and off).
``CRUCIBLE_MK_PURE=1`` turns it off, as does setting ``enabled = False`` here.
"""

from __future__ import annotations

import os

from harness.megakernel.amk_ops import INTEGER_DTYPES, KV_WRITERS, OPERAND_RULES, OPS, PARAM_TYPES, TILED, WEIGHT_KINDS
from harness.megakernel.format import (DTYPES, FORMAT, KINDS, MAX_INPUTS, MAX_OUTPUTS, MAX_RANK, MAX_WAITS,
                                       ON_CHIP_SPACES, READ_ONLY_KINDS, SPACES)

_NEEDS = {"int": 0, "weight": 1, "kv": 2}


def _load():
    if os.environ.get("CRUCIBLE_MK_PURE"):
        return None
    try:
        from harness.megakernel import _mkfast
    except ImportError:
        return None
    return configure(_mkfast)


def configure(module):
    """``module`` (the built extension) with this package's tables; returns it."""
    kinds = {k: (k in READ_ONLY_KINDS) | (k == "KV_CACHE") << 1 | (k == "IO_OUTPUT") << 2 | (k in WEIGHT_KINDS) << 3
             for k in KINDS}
    ops = {op: (low, 8 if high < 0 else high, outs, tuple(required),
                tuple((side == "out", position, _NEEDS[need]) for side, position, need in OPERAND_RULES.get(op, ())),
                int(op in KV_WRITERS), int(op in TILED))
           for op, (low, high, outs, required) in OPS.items()}
    # parameter names: 1 int32, 2 a real number, 0 required by an op but of no fixed type
    params = {**{key: 0 for *_, required in OPS.values() for key in required},
              **{key: 1 if kind == "i" else 2 for key, kind in PARAM_TYPES.items()}}
    module.configure(FORMAT, kinds, {s: int(s in ON_CHIP_SPACES) for s in SPACES},
                      {d: int(d in INTEGER_DTYPES) for d in DTYPES}, ops, params,
                      MAX_INPUTS, MAX_OUTPUTS, MAX_WAITS, MAX_RANK)
    return module


native = _load()
enabled = native is not None


def tasks_from_amk(tasks, buffers, tiled):
    """The imported task list, or None (then the Python import runs)."""
    if not enabled or type(tasks) is not list or type(buffers) is not list:
        return None
    return native.tasks_from_amk(tasks, buffers, tiled)


def judge(doc):
    """(tasks, counters, grid) when ``doc`` is safe_any_placement, False when it is certainly
    unsafe (under AMK's loader too), else None (then Python decides). ``doc`` is a Crucible
    document or an AMK IR 0.x one as AMK writes it, read as ``amk_io.from_amk`` would import it."""
    if not enabled:
        return None
    return native.judge(doc)
