"""Hand-built schedules and fuzzing helpers for the megakernel unit tests."""

import copy

from harness.megakernel import oracle, structure
from harness.megakernel.builder import ScheduleBuilder
from harness.megakernel.validator import validate


def two_tile_join(threshold: int = 2, sms: int = 2) -> dict:
    """Two tiles write halves of y on two SMs; a reader on SM 0 waits for both, then writes out."""
    b = ScheduleBuilder({"name": "t", "num_sms": sms})
    x = b.buffer("x", "IO_INPUT", [1, 4])
    y = b.buffer("y", "ACTIVATION", [1, 4], space="GLOBAL_SCRATCH")
    z = b.buffer("z", "IO_OUTPUT", [1, 4])
    tiles, done = b.counter("tiles"), b.counter("done")
    b.task("COPY", [x], [y], tiles, sm=0, regions={y: [[0, 1], [0, 2]]})
    b.task("COPY", [x], [y], tiles, sm=1 % sms, regions={y: [[0, 1], [2, 4]]})
    b.task("COPY", [y], [z], done, waits=[(tiles, threshold)], sm=0)
    return b.doc


def chain(n: int = 3, sms: int = 2) -> dict:
    """x -> a0 -> a1 -> ... -> out, task i on SM i % sms, each waiting on the previous counter."""
    b = ScheduleBuilder({"name": "t", "num_sms": sms})
    prev = b.buffer("x", "IO_INPUT", [1, 4])
    counter = None
    for i in range(n):
        kind = "IO_OUTPUT" if i == n - 1 else "ACTIVATION"
        out = b.buffer(f"a{i}", kind, [1, 4], space="HBM" if kind == "IO_OUTPUT" else "GLOBAL_SCRATCH")
        mine = b.counter(f"c{i}")
        b.task("COPY", [prev], [out], mine, waits=[(counter, 1)] if counter is not None else [], sm=i % sms)
        prev, counter = out, mine
    return b.doc


def kv_step() -> dict:
    """An append to a KV cache and an attention that reads it after the append."""
    b = ScheduleBuilder({"name": "t", "num_sms": 2})
    k = b.buffer("k", "IO_INPUT", [1, 4])
    cache = b.buffer("cache", "KV_CACHE", [8, 4], source="cache")
    out = b.buffer("out", "IO_OUTPUT", [1, 4])
    appended, attended = b.counter(), b.counter()
    b.task("KV_APPEND", [k], [cache], appended, sm=0, regions={cache: [[3, 4], [0, 4]]})
    b.task("ATTENTION_TILE", [k, cache], [out], attended, waits=[(appended, 1)], sm=1)
    return b.doc


def paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, prefix + (index,))


def replace_at(doc, path, new):
    doc = copy.deepcopy(doc)
    if not path:
        return new
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return doc


def check_agreement(doc):
    """The validator gives a verdict, agrees with the oracle on what is malformed, and its fast
    reader never accepts what the careful one rejects."""
    verdict = validate(doc)
    label = oracle.label(doc, max_states=500, runs=2)
    assert isinstance(verdict.ok, bool) and "internal_error" not in verdict.classes
    structural = verdict.stats.get("phase") == "structure"
    assert structural == (label["mode"] == "structural"), (verdict.classes, label)
    fast = structure._fast(doc) if fast_reads(doc) else None
    assert fast is None or not structural


def fast_reads(doc) -> bool:
    try:
        structure._fast(doc)
        return True
    except Exception:
        return False
