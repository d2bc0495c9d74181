"""Hand-built schedules for the megakernel unit tests (imported by the test modules)."""

from harness.megakernel.builder import ScheduleBuilder


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
