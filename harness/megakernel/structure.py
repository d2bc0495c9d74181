"""The validator's first pass: read a document into flat arrays, or say what is malformed.

Never raises: every problem becomes a violation. Classes found here: ``malformed``,
``dangling_ref``, ``caps_exceeded``, ``bad_threshold``, ``sm_out_of_range``, ``not_co_resident``,
``write_readonly``. Ids are mapped to dense indices so the later passes work on lists and ints.
"""

from __future__ import annotations

from itertools import chain
from operator import sub

from harness.megakernel.format import (DTYPES, FORMAT_MAJOR, FORMAT_NAME, KINDS, MAX_INPUTS,
                                       MAX_OUTPUTS, MAX_RANK, MAX_WAITS, ON_CHIP_SPACES,
                                       READ_ONLY_KINDS, SPACES)

_KINDS, _SPACES, _DTYPES = frozenset(KINDS), frozenset(SPACES), frozenset(DTYPES)
_LIMIT = 20  # violations kept per document; the count of the rest is reported


def violation(cls: str, family: str, message: str, **witness) -> dict:
    return {"class": cls, "family": family, "message": message, "witness": witness}


class Compiled:
    """A well-formed document as dense arrays (index = position in the document's lists)."""

    def __init__(self):
        self.task_ids: list[int] = []
        self.sm: list[int] = []
        self.waits: list[list[tuple[int, int]]] = []
        self.out: list[int] = []
        self.inputs: list[list[int]] = []
        self.outputs: list[list[int]] = []
        self.boxes: list[dict[int, list]] = []
        self.buf_ids: list[int] = []
        self.buf_kind: list[str] = []
        self.buf_onchip: list[bool] = []
        self.buf_shape: list[list[int]] = []
        self.page_of: dict[int, int] = {}
        self.counter_ids: list[int] = []
        self.num_sms = 0
        self.max_resident = 0


class _Reader:
    def __init__(self):
        self.found: list[dict] = []
        self.c = Compiled()

    def add(self, cls: str, message: str, **witness) -> None:
        if len(self.found) < _LIMIT:
            self.found.append(violation(cls, "structural", message, **witness))
        else:
            self.found.append(None)  # counted, not kept


def _int(value) -> bool:
    return type(value) is int


def compile_document(doc) -> tuple[Compiled | None, list[dict]]:
    """(compiled, []) for a well-formed document; (None, violations) otherwise."""
    try:
        fast = _fast(doc)
    except (TypeError, ValueError, AttributeError, KeyError, RecursionError, IndexError):
        fast = None
    if fast is not None:
        return fast, []
    r = _Reader()
    try:
        _read(doc, r)
    except RecursionError:  # absurdly nested input; still a verdict, never a crash
        r.add("malformed", "document is nested too deeply to read")
    found = [v for v in r.found if v is not None]
    if len(r.found) > len(found):
        found.append(violation("malformed", "structural", f"... and {len(r.found) - len(found)} more"))
    return (None, found) if r.found else (r.c, [])


def _read(doc, r: _Reader) -> None:
    if not isinstance(doc, dict):
        r.add("malformed", f"a schedule is a JSON object, got {type(doc).__name__}")
        return
    fmt = doc.get("format")
    if not _format_ok(fmt):
        r.add("malformed", f"format {fmt!r} is not {FORMAT_NAME}/{FORMAT_MAJOR}.x")
        return
    lists = [doc.get(key) for key in ("buffers", "counters", "tasks")]
    if not all(type(item) is list for item in lists) or not _target(doc.get("target"), r):
        r.add("malformed", "buffers, counters and tasks must be lists and target an object "
              "with integer num_sms >= 1 (and max_resident >= 1 when given)")
        return
    buffers = _buffers(lists[0], r)
    counters = _counters(lists[1], r)
    _pages(doc.get("pages"), buffers, r)
    _tasks(lists[2], buffers, counters, r)


def _format_ok(fmt) -> bool:
    if type(fmt) is not str or "/" not in fmt:
        return False
    name, _, version = fmt.partition("/")
    major = version.split(".")[0]
    return name == FORMAT_NAME and major == str(FORMAT_MAJOR)


def _target(target, r: _Reader) -> bool:
    if type(target) is not dict:
        return False
    num_sms = target.get("num_sms")
    resident = target.get("max_resident", num_sms)
    if not (_int(num_sms) and num_sms >= 1 and _int(resident) and resident >= 1):
        return False
    r.c.num_sms, r.c.max_resident = num_sms, resident
    return True


def _buffers(items: list, r: _Reader) -> dict[int, int]:
    index: dict[int, int] = {}
    c = r.c
    for position, buf in enumerate(items):
        if type(buf) is not dict:
            r.add("malformed", f"buffers[{position}] is not an object")
            continue
        bid, kind, space, shape = buf.get("id"), buf.get("kind"), buf.get("space", "HBM"), buf.get("shape")
        if not _int(bid) or bid in index:
            r.add("malformed", f"buffers[{position}]: id {bid!r} is not a unique integer")
            continue
        if kind not in _KINDS or space not in _SPACES or buf.get("dtype") not in _DTYPES:
            r.add("malformed", f"buffer {bid}: unknown kind, space or dtype", buffer=bid)
        if type(shape) is not list or not shape or not all(_int(d) and d >= 1 for d in shape):
            r.add("malformed", f"buffer {bid}: shape must be a non-empty list of positive ints", buffer=bid)
            shape = [1]
        elif len(shape) > MAX_RANK:
            r.add("caps_exceeded", f"buffer {bid}: rank {len(shape)} > {MAX_RANK}", buffer=bid)
        index[bid] = len(c.buf_ids)
        c.buf_ids.append(bid)
        c.buf_kind.append(kind)
        c.buf_onchip.append(space in ON_CHIP_SPACES)
        c.buf_shape.append(shape)
    return index


def _counters(items: list, r: _Reader) -> dict[int, int]:
    index: dict[int, int] = {}
    for position, counter in enumerate(items):
        cid = counter.get("id") if type(counter) is dict else None
        if not _int(cid) or cid in index:
            r.add("malformed", f"counters[{position}]: id {cid!r} is not a unique integer")
            continue
        if counter.get("init", 0) != 0 or type(counter.get("init", 0)) is not int:
            r.add("malformed", f"counter {cid}: init must be 0 (counters are zeroed every launch)",
                  counter=cid)
        index[cid] = len(r.c.counter_ids)
        r.c.counter_ids.append(cid)
    return index


def _pages(pages, buffers: dict[int, int], r: _Reader) -> None:
    if pages is None:
        return
    table = pages.get("buffer_to_page") if type(pages) is dict else None
    plist = pages.get("pages") if type(pages) is dict else None
    if type(table) is not dict or type(plist) is not list:
        r.add("malformed", "pages must be null or {buffer_to_page: {...}, pages: [...]}")
        return
    spaces: dict[int, str] = {}
    for page in plist:
        pid = page.get("id") if type(page) is dict else None
        if not _int(pid) or pid in spaces or page.get("space") not in _SPACES:
            r.add("malformed", f"page {pid!r}: needs a unique integer id and a known space")
            continue
        spaces[pid] = page["space"]
    for key, pid in table.items():
        _page_binding(key, pid, buffers, spaces, r)


def _page_binding(key, pid, buffers: dict[int, int], spaces: dict[int, str], r: _Reader) -> None:
    try:
        bid = int(key)
    except (TypeError, ValueError):
        r.add("malformed", f"buffer_to_page key {key!r} is not a buffer id")
        return
    if bid not in buffers or not _int(pid) or pid not in spaces:
        r.add("dangling_ref", f"page binding {key!r} -> {pid!r} names an unknown buffer or page",
              buffer=bid, page=pid)
        return
    b = buffers[bid]
    if r.c.buf_kind[b] != "ACTIVATION":
        r.add("malformed", f"buffer {bid}: only activations may be bound to pages", buffer=bid)
    elif r.c.buf_onchip[b] != (spaces[pid] in ON_CHIP_SPACES):
        r.add("malformed", f"buffer {bid}: its space differs from page {pid}'s", buffer=bid, page=pid)
    r.c.page_of[b] = pid


def _tasks(items: list, buffers: dict[int, int], counters: dict[int, int], r: _Reader) -> None:
    seen: set[int] = set()
    used_sms: set[int] = set()
    for position, task in enumerate(items):
        if type(task) is not dict:
            r.add("malformed", f"tasks[{position}] is not an object")
            continue
        tid = task.get("id")
        if not _int(tid) or tid in seen:
            r.add("malformed", f"tasks[{position}]: id {tid!r} is not a unique integer")
            continue
        seen.add(tid)
        _task(task, tid, buffers, counters, r)
        sm = task.get("sm")
        if _int(sm):
            used_sms.add(sm)
    if len(used_sms) > r.c.max_resident:
        r.add("not_co_resident", f"{len(used_sms)} SM programs but only {r.c.max_resident} can be "
              "co-resident in one cooperative launch", programs=len(used_sms), limit=r.c.max_resident)


def _task(task: dict, tid: int, buffers: dict, counters: dict, r: _Reader) -> None:
    c = r.c
    inputs = _refs(task.get("inputs"), buffers, tid, "input", MAX_INPUTS, r)
    outputs = _refs(task.get("outputs"), buffers, tid, "output", MAX_OUTPUTS, r)
    out = _counter_ref(task.get("out_counter"), counters, tid, r)
    waits = _waits(task.get("waits", []), counters, tid, r)
    sm = task.get("sm")
    if not _int(sm):
        r.add("malformed", f"task {tid}: sm {sm!r} is not assigned to an integer SM", task=tid)
    elif not 0 <= sm < c.num_sms:
        r.add("sm_out_of_range", f"task {tid}: sm {sm} is outside the target's 0..{c.num_sms - 1}",
              task=tid, sm=sm)
    if type(task.get("params", {})) is not dict or type(task.get("op")) is not str:
        r.add("malformed", f"task {tid}: op must be a string and params an object", task=tid)
    for b in outputs:
        if c.buf_kind[b] in READ_ONLY_KINDS:
            r.add("write_readonly", f"task {tid} writes {c.buf_kind[b]} buffer {c.buf_ids[b]}",
                  task=tid, buffer=c.buf_ids[b])
    boxes = _regions(task.get("regions"), outputs, buffers, tid, r)
    c.task_ids.append(tid)
    c.sm.append(sm)
    c.waits.append(waits)
    c.out.append(out)
    c.inputs.append(inputs)
    c.outputs.append(outputs)
    c.boxes.append(boxes)


def _refs(ids, index: dict, tid: int, what: str, cap: int, r: _Reader) -> list[int]:
    if type(ids) is not list:
        r.add("malformed", f"task {tid}: {what}s must be a list of buffer ids", task=tid)
        return []
    if len(ids) > cap:
        r.add("caps_exceeded", f"task {tid}: {len(ids)} {what}s > {cap} (truncated on the device)",
              task=tid, count=len(ids), cap=cap)
    found = []
    for bid in ids:
        if _int(bid) and bid in index:
            found.append(index[bid])
        else:
            r.add("dangling_ref", f"task {tid}: {what} buffer {bid!r} does not exist", task=tid, buffer=bid)
    return found


def _counter_ref(cid, counters: dict, tid: int, r: _Reader) -> int:
    if _int(cid) and cid in counters:
        return counters[cid]
    r.add("dangling_ref", f"task {tid}: counter {cid!r} does not exist", task=tid, counter=cid)
    return -1


def _waits(waits, counters: dict, tid: int, r: _Reader) -> list[tuple[int, int]]:
    if type(waits) is not list:
        r.add("malformed", f"task {tid}: waits must be a list", task=tid)
        return []
    if len(waits) > MAX_WAITS:
        r.add("caps_exceeded", f"task {tid}: {len(waits)} waits > {MAX_WAITS} (truncated on the device)",
              task=tid, count=len(waits), cap=MAX_WAITS)
    found = []
    for wait in waits:
        if type(wait) is not dict:
            r.add("malformed", f"task {tid}: a wait is not an object", task=tid)
            continue
        threshold = wait.get("threshold")
        if not _int(threshold) or threshold < 1:
            r.add("bad_threshold", f"task {tid}: threshold {threshold!r} is not a static positive int",
                  task=tid, threshold=threshold)
            continue
        found.append((_counter_ref(wait.get("counter"), counters, tid, r), threshold))
    return found


def _regions(regions, outputs: list[int], buffers: dict, tid: int, r: _Reader) -> dict[int, list]:
    if regions is None:
        return {}
    if type(regions) is not list:
        r.add("malformed", f"task {tid}: regions must be a list", task=tid)
        return {}
    boxes: dict[int, list] = {}
    for region in regions:
        bid = region.get("buffer") if type(region) is dict else None
        b = buffers.get(bid) if _int(bid) else None
        if b is None or b not in outputs:
            r.add("malformed", f"task {tid}: a region names {bid!r}, which is not one of its outputs", task=tid)
            continue
        box = region.get("box")
        if not _box_ok(box, r.c.buf_shape[b]):
            r.add("malformed", f"task {tid}: region box {box!r} does not fit buffer {bid}", task=tid, buffer=bid)
            continue
        boxes[b] = box
    return boxes


def _box_ok(box, shape: list[int]) -> bool:
    if type(box) is not list or len(box) != len(shape):
        return False
    for pair, dim in zip(box, shape):
        if type(pair) is not list or len(pair) != 2 or not (_int(pair[0]) and _int(pair[1])):
            return False
        if not 0 <= pair[0] < pair[1] <= dim:
            return False
    return True


# --------------------------------------------------------------------------- fast path
# The same rules as above, written for speed on well-formed input: it returns None at the first
# doubt and the careful reader above then names what is wrong. It must never be *less* strict
# (tests/megakernel/test_structure.py fuzzes the two against each other).

_INT_ONLY, _LIST_ONLY = frozenset({int}), frozenset({list})
_DICT_ONLY, _STR_ONLY = frozenset({dict}), frozenset({str})
_EMPTY: list = []
_EMPTY_DICT: dict = {}


def _fast(doc) -> Compiled | None:
    if type(doc) is not dict or not _format_ok(doc.get("format")):
        return None
    target, buffers, counters, tasks = (doc.get(k) for k in ("target", "buffers", "counters", "tasks"))
    if type(target) is not dict or type(buffers) is not list or type(counters) is not list \
            or type(tasks) is not list:
        return None
    c = Compiled()
    if not _fast_target(target, c):
        return None
    bindex = _fast_buffers(buffers, c)
    cindex = _fast_counters(counters, c)
    if bindex is None or cindex is None:
        return None
    if doc.get("pages") is not None:
        r = _Reader()
        r.c = c
        _pages(doc["pages"], bindex, r)
        if r.found:
            return None
    return c if _fast_tasks(tasks, bindex, cindex, c) else None


def _fast_target(target: dict, c: Compiled) -> bool:
    num_sms = target.get("num_sms")
    resident = target.get("max_resident", num_sms)
    if type(num_sms) is not int or num_sms < 1 or type(resident) is not int or resident < 1:
        return False
    c.num_sms, c.max_resident = num_sms, resident
    return True


def _fast_buffers(buffers: list, c: Compiled) -> dict | None:
    # Column at a time: the loops run in C (map, set, min/max), which is what makes small
    # schedules cheap. A missing key or a non-object raises and sends us to the careful reader.
    ids = [b["id"] for b in buffers]
    kinds = [b["kind"] for b in buffers]
    shapes = [b["shape"] for b in buffers]
    spaces = [b.get("space", "HBM") for b in buffers]
    if not (set(map(type, buffers)) <= _DICT_ONLY and set(map(type, ids)) <= _INT_ONLY
            and len(set(ids)) == len(ids) and set(kinds) <= _KINDS and set(spaces) <= _SPACES
            and {b["dtype"] for b in buffers} <= _DTYPES and set(map(type, shapes)) <= _LIST_ONLY):
        return None
    dims = list(chain.from_iterable(shapes))
    if buffers and (min(map(len, shapes)) < 1 or max(map(len, shapes)) > MAX_RANK
                    or not set(map(type, dims)) <= _INT_ONLY or min(dims) < 1):
        return None
    c.buf_ids, c.buf_kind, c.buf_shape = ids, kinds, shapes
    c.buf_onchip = [space in ON_CHIP_SPACES for space in spaces]
    return dict(zip(ids, range(len(ids))))


def _fast_counters(counters: list, c: Compiled) -> dict | None:
    ids = [counter["id"] for counter in counters]
    inits = [counter.get("init", 0) for counter in counters]
    if not (set(map(type, counters)) <= _DICT_ONLY and set(map(type, ids)) <= _INT_ONLY
            and len(set(ids)) == len(ids) and set(map(type, inits)) <= _INT_ONLY and not any(inits)):
        return None
    c.counter_ids = ids
    return dict(zip(ids, range(len(ids))))


def _fast_tasks(tasks: list, bindex: dict, cindex: dict, c: Compiled) -> bool:
    if not set(map(type, tasks)) <= _DICT_ONLY:
        return False
    tids = [t["id"] for t in tasks]
    ins = [t["inputs"] for t in tasks]
    outs = [t["outputs"] for t in tasks]
    waits = [t.get("waits", _EMPTY) for t in tasks]
    sms = [t["sm"] for t in tasks]
    counters = [t["out_counter"] for t in tasks]
    if not (set(map(type, tids)) <= _INT_ONLY and len(set(tids)) == len(tids)
            and set(map(type, ins)) <= _LIST_ONLY and set(map(type, outs)) <= _LIST_ONLY
            and set(map(type, waits)) <= _LIST_ONLY and set(map(type, sms)) <= _INT_ONLY
            and set(map(type, counters)) <= _INT_ONLY and set(counters) <= cindex.keys()
            and {type(t["op"]) for t in tasks} <= _STR_ONLY
            and {type(t.get("params", _EMPTY_DICT)) for t in tasks} <= _DICT_ONLY):
        return False
    if tasks and (min(sms) < 0 or max(sms) >= c.num_sms or max(map(len, ins)) > MAX_INPUTS
                  or max(map(len, outs)) > MAX_OUTPUTS or max(map(len, waits)) > MAX_WAITS
                  or len(set(sms)) > c.max_resident):
        return False
    refs = list(chain.from_iterable(ins)) + list(chain.from_iterable(outs))
    if not set(map(type, refs)) <= _INT_ONLY or not set(refs) <= bindex.keys():
        return False
    lookup = bindex.__getitem__
    c.outputs = [list(map(lookup, o)) for o in outs]
    kinds = c.buf_kind
    if any(kinds[b] in READ_ONLY_KINDS for b in set(chain.from_iterable(c.outputs))):
        return False
    c.waits = _fast_waits(waits, cindex)
    c.boxes = _fast_regions(tasks, outs, bindex, c)
    if c.waits is None or c.boxes is None:
        return False
    c.task_ids, c.sm, c.inputs = tids, sms, [list(map(lookup, i)) for i in ins]
    c.out = list(map(cindex.__getitem__, counters))
    return True


def _fast_waits(waits: list, cindex: dict) -> list | None:
    flat = list(chain.from_iterable(waits))
    if not flat:
        return [[] for _ in waits]
    ks, cs = [w["threshold"] for w in flat], [w["counter"] for w in flat]
    if not (set(map(type, flat)) <= _DICT_ONLY and set(map(type, ks)) <= _INT_ONLY and min(ks) >= 1
            and set(map(type, cs)) <= _INT_ONLY and set(cs) <= cindex.keys()):
        return None
    pairs = list(zip(map(cindex.__getitem__, cs), ks))
    result, at = [], 0
    for n in map(len, waits):
        result.append(pairs[at:at + n])
        at += n
    return result


def _fast_regions(tasks: list, outs: list, bindex: dict, c: Compiled) -> list | None:
    owner, regions = [], []
    for i, task in enumerate(tasks):
        mine = task.get("regions")
        if mine is not None:
            if type(mine) is not list:
                return None
            owner += [i] * len(mine)
            regions += mine
    boxes_of: list[dict] = [{} for _ in tasks]
    if not regions:
        return boxes_of
    bufs, boxes = [r["buffer"] for r in regions], [r["box"] for r in regions]
    if not (set(map(type, regions)) <= _DICT_ONLY and set(map(type, bufs)) <= _INT_ONLY
            and set(zip(owner, bufs)) <= {(i, b) for i, o in enumerate(outs) for b in o}
            and set(map(type, boxes)) <= _LIST_ONLY):
        return None
    index = list(map(bindex.__getitem__, bufs))
    shapes = [c.buf_shape[k] for k in index]
    if list(map(len, boxes)) != list(map(len, shapes)):
        return None
    pairs, dims = list(chain.from_iterable(boxes)), list(chain.from_iterable(shapes))
    if not set(map(type, pairs)) <= _LIST_ONLY or set(map(len, pairs)) != {2}:
        return None
    los, his = [p[0] for p in pairs], [p[1] for p in pairs]
    if not (set(map(type, los)) | set(map(type, his))) <= _INT_ONLY or min(los) < 0 \
            or min(map(sub, his, los)) < 1 or max(map(sub, his, dims)) > 0:
        return None
    for i, k, box in zip(owner, index, boxes):
        boxes_of[i][k] = box
    return boxes_of
