"""The validator's first pass: read a document into flat arrays, or say what is malformed.

Never raises: every problem becomes a violation. Classes found here: ``malformed``,
``dangling_ref``, ``caps_exceeded``, ``bad_threshold``, ``sm_out_of_range``, ``not_co_resident``,
``write_readonly``, ``tile_out_of_bounds``. Ids are mapped to dense indices so the later passes work on lists and ints.
"""

from __future__ import annotations

from harness.megakernel.format import (DTYPES, FORMAT, FORMAT_MAJOR, FORMAT_NAME, KINDS, MAX_INPUTS,
                                       MAX_OUTPUTS, MAX_RANK, MAX_WAITS, ON_CHIP_SPACES,
                                       READ_ONLY_KINDS, SPACES)

_KINDS, _SPACES, _DTYPES = frozenset(KINDS), frozenset(SPACES), frozenset(DTYPES)
_INT_ONLY = frozenset({int})  # _INT_ONLY.issuperset(map(type, xs)): every x is an int (not a bool)
_LIMIT = 20  # violations kept per document; the rest are counted in a last "... and N more"


def violation(cls: str, family: str, message: str, **witness) -> dict:
    return {"class": cls, "family": family, "message": message, "witness": witness}


class Compiled:
    """A well-formed document as dense arrays (index = position in the document's lists). The
    careful reader appends to the lists ``__init__`` starts; the fast reader sets every field
    itself (its buffer and counter ids are ranges: there, ids are positions), and where it stops
    at a doubt, the careful reader appends to the task columns it left."""

    __slots__ = ("task_ids", "sm", "waits", "out", "inputs", "outputs", "boxes", "buf_ids", "buf_kind",
                 "buf_onchip", "buf_shape", "page_of", "counter_ids", "num_sms", "max_resident",
                 "readonly", "links")

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
        self.readonly: set[int] = set()   # indices of read-only buffers (WEIGHT, CONST, IO_INPUT)
        self.links = None                 # (qpred, producer counts, in_order, programs): see hb.Graph


class _Reader:
    def __init__(self, c: Compiled | None = None):
        self.found: list[dict] = []
        self.c = Compiled() if c is None else c

    def add(self, cls: str, message: str, **witness) -> None:
        if len(self.found) < _LIMIT:
            self.found.append(violation(cls, "structural", message, **witness))
        else:
            self.found.append(None)  # counted, not kept


def _known(value, names: frozenset) -> bool:
    """Enum membership that cannot raise on unhashable values (lists, dicts)."""
    return type(value) is str and value in names


def compile_document(doc) -> tuple[Compiled | None, list[dict]]:
    """(compiled, []) for a well-formed document; (None, violations) otherwise."""
    proven: list = []  # filled by the fast reader once all but the tasks passed (see _read)
    try:
        fast = _fast(doc, proven)
    except (TypeError, ValueError, AttributeError, KeyError, RecursionError, IndexError):
        fast = None
    if fast is not None:
        return fast, []
    tables = []
    if proven:  # the fast reader's tables and the tasks it passed (ids are positions: each indexes itself)
        r = _Reader(proven[0])
        tables = [{i: i for i in r.c.buf_ids}, {i: i for i in r.c.counter_ids}]
    else:
        r = _Reader()
    try:
        _read(doc, r, tables)
    except RecursionError:  # absurdly nested input; still a verdict, never a crash
        r.add("malformed", "document is nested too deeply to read")
    except Exception as error:  # a reader bug must still give a (rejecting) verdict
        r.add("malformed", f"unreadable document ({type(error).__name__}: {error})")
    if not r.found:  # well-formed after all (the fast reader is stricter on odd values)
        r.c.readonly = {i for i, kind in enumerate(r.c.buf_kind) if kind in READ_ONLY_KINDS}
        return r.c, []
    found = [v for v in r.found if v is not None]
    if len(r.found) > len(found):
        found.append(violation("malformed", "structural", f"... and {len(r.found) - len(found)} more"))
    return None, found


def _read(doc, r: _Reader, proven: list) -> None:
    """The careful reader. ``proven``: [buffer index, counter index] when the fast reader already
    found the buffers, counters and pages well-formed (``r.c`` then holds them, and the tasks it
    passed), so that only the tasks from its first doubt on are read again; the careful rules find
    nothing where the fast ones found nothing."""
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
    if proven:
        buffers, counters = proven
    else:
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
    if not (type(num_sms) is int and num_sms >= 1 and type(resident) is int and resident >= 1):
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
        if type(bid) is not int or bid in index:
            r.add("malformed", f"buffers[{position}]: id {bid!r} is not a unique integer")
            continue
        if not (_known(kind, _KINDS) and _known(space, _SPACES) and _known(buf.get("dtype"), _DTYPES)):
            r.add("malformed", f"buffer {bid}: unknown kind, space or dtype", buffer=bid)
        if type(shape) is not list or not shape or not (_INT_ONLY.issuperset(map(type, shape)) and min(shape) >= 1):
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
        if type(cid) is not int or cid in index:
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
        if type(pid) is not int or pid in spaces or not _known(page.get("space"), _SPACES):
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
    if bid not in buffers or type(pid) is not int or pid not in spaces:
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
    c = r.c
    seen, used_sms = set(c.task_ids), set(c.sm)  # the tasks the fast reader passed (usually none)
    start = len(c.task_ids)
    if len(seen) < start:  # (its ids are unique only once checked at its end: read them all again)
        c.task_ids, c.sm, c.out, c.inputs, c.outputs, c.waits, c.boxes = [], [], [], [], [], [], []
        seen, used_sms, start = set(), set(), 0
    for position in range(start, len(items)):
        task = items[position]
        if type(task) is not dict:
            r.add("malformed", f"tasks[{position}] is not an object")
            continue
        tid = task.get("id")
        if type(tid) is not int or tid in seen:
            r.add("malformed", f"tasks[{position}]: id {tid!r} is not a unique integer")
            continue
        seen.add(tid)
        _task(task, tid, buffers, counters, r)
        sm = task.get("sm")
        if type(sm) is int:
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
    if type(sm) is not int:
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
        if type(bid) is int and bid in index:
            found.append(index[bid])
        else:
            r.add("dangling_ref", f"task {tid}: {what} buffer {bid!r} does not exist", task=tid, buffer=bid)
    return found


def _counter_ref(cid, counters: dict, tid: int, r: _Reader) -> int:
    if type(cid) is int and cid in counters:
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
        if type(threshold) is not int or threshold < 1:
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
        b = buffers.get(bid) if type(bid) is int else None
        if b is None or b not in outputs:
            r.add("malformed", f"task {tid}: a region names {bid!r}, which is not one of its outputs", task=tid)
            continue
        box = region.get("box")
        fit = _box_fit(box, r.c.buf_shape[b])
        if fit == "outside":
            r.add("tile_out_of_bounds", f"task {tid}: its tile {box!r} reaches outside buffer {bid} "
                  f"(shape {r.c.buf_shape[b]})", task=tid, buffer=bid, box=box, shape=r.c.buf_shape[b])
            continue
        if fit is not None:
            r.add("malformed", f"task {tid}: region box {box!r} does not fit buffer {bid}", task=tid, buffer=bid)
            continue
        boxes[b] = box
    return boxes


def _box_fit(box, shape: list[int]) -> str | None:
    """None for a box inside ``shape``; "outside" for a well-formed box that is not; else "bad"."""
    if type(box) is not list or len(box) != len(shape):
        return "bad"
    outside = False
    for pair, dim in zip(box, shape):
        if type(pair) is not list or len(pair) != 2:
            return "bad"
        lo, hi = pair
        if type(lo) is not int or type(hi) is not int or hi <= lo:
            return "bad"
        if lo < 0 or hi > dim:
            outside = True
    return "outside" if outside else None


# --------------------------------------------------------------------------- fast path
# The same rules as above, written for speed on well-formed input: it returns None at the first
# doubt and the careful reader above then names what is wrong. It must never be *less* strict
# (tests/megakernel/test_mk_never_raises.py fuzzes the two against each other).
#
# Most schedules are small (a handful of tasks), so what costs is the number of Python operations
# per item and the fixed cost of every call into a builtin (each costs as much as several inline
# checks). So the checks stay inline in one loop per list; even the buffer references are
# checked one by one, as a builtin run over a column of them costs more on lists this short
# (set.issuperset(map(type, refs)) builds a set first).
#
# The fast reader takes only documents whose buffer and counter ids equal their positions, as
# every builder here emits them: then a task's references already are the dense indices the later
# passes use, no id -> index tables are built, and a reference is checked with a range test. Other
# ids are legal; such documents are read by the careful reader (the same verdict, more slowly).

_EMPTY: list = []
_EMPTY_DICT: dict = {}
_NO_BOXES: dict = {}  # shared and never written: boxes are only read
_MAX_FAST_SMS = 1024  # the fast reader keeps a list per SM; a larger target is read carefully


def compile_unplaced(doc) -> Compiled | None:
    """``doc`` with every task on an SM of its own (``placement.unplaced``), compiled without
    building that document; None at a doubt (the caller then builds it and reads it carefully).
    Tasks that do name an SM must name one of the real target's; unassigned ones count as SM 0
    for co-residency, as AMK's loader would run them there if some task is assigned."""
    try:
        tasks, target = doc["tasks"], doc["target"]
        real, resident = target["num_sms"], target.get("max_resident", target["num_sms"])
        if type(real) is not int or type(resident) is not int or real < 1 or resident < 1:
            return None
        used = set()
        for t in tasks:
            sm = t["sm"]
            if sm is not None:
                if type(sm) is not int or not 0 <= sm < real:
                    return None
                used.add(sm)
        if used and len(used | {0}) > resident:
            return None
        n = max(len(tasks), 1)
        return _fast({**doc, "target": {**target, "num_sms": n, "max_resident": n}}, own_sms=True)
    except (TypeError, ValueError, AttributeError, KeyError, RecursionError, IndexError):
        return None


def _fast(doc, proven: list | None = None, own_sms: bool = False) -> Compiled | None:
    """The compiled document, or None (or an exception) at the first doubt. ``proven`` receives
    the compiled document once everything but the tasks has been read; its task columns then
    grow by each task that passes."""
    if type(doc) is not dict or (doc.get("format") != FORMAT and not _format_ok(doc.get("format"))):
        return None
    # required keys by subscript (cheaper than .get): a missing one raises, and the careful reader names it
    target, buffers, counters, tasks = doc["target"], doc["buffers"], doc["counters"], doc["tasks"]
    if type(target) is not dict or type(buffers) is not list or type(counters) is not list \
            or type(tasks) is not list:
        return None
    num_sms = target["num_sms"]
    resident = target.get("max_resident", num_sms)
    if type(num_sms) is not int or num_sms < 1 or type(resident) is not int or resident < 1:
        return None
    c = Compiled.__new__(Compiled)  # no empty lists to fill: each step below sets its fields whole
    c.num_sms, c.max_resident, c.page_of, c.links = num_sms, resident, {}, None
    if not (_fast_buffers(buffers, c) and _fast_counters(counters, c)):
        return None
    pages = doc.get("pages")
    if pages is not None:
        r = _Reader(c)
        _pages(pages, c.buf_ids, r)  # (a range: ids are positions)
        if r.found:
            return None
    if proven is not None:
        proven.append(c)
    return c if _fast_tasks(tasks, c, own_sms) else None


# Known names only, so that a look-up both checks a name and classifies it (a KeyError: unknown).
_READ_ONLY_KIND = {kind: kind in READ_ONLY_KINDS for kind in KINDS}
_ON_CHIP_SPACE = {space: space in ON_CHIP_SPACES for space in SPACES}

# The loops below take the builtins they call on every item as default arguments: a local name
# costs a fraction of a global one, and these loops are mostly such look-ups.


def _fast_buffers(buffers: list, c: Compiled, type=type, int=int, list=list, len=len,
                  read_only_kind=_READ_ONLY_KIND, on_chip_space=_ON_CHIP_SPACE, dtypes=_DTYPES) -> bool:
    kinds, onchip, shapes = [], [], []
    readonly: set[int] = set()
    position = -1  # a counter of our own: cheaper than enumerate's tuples
    for b in buffers:
        position += 1
        bid, kind, shape = b["id"], b["kind"], b["shape"]
        read_only, on = read_only_kind[kind], on_chip_space[b.get("space", "HBM")]
        if (type(b) is not dict or bid != position or type(bid) is not int or b["dtype"] not in dtypes
                or type(shape) is not list):
            return False
        rank = len(shape)
        if rank == 2:  # the common rank, unrolled: a loop's iterator costs more than its checks
            rows, cols = shape
            if type(rows) is not int or type(cols) is not int or rows < 1 or cols < 1:
                return False
        elif not 0 < rank <= MAX_RANK:
            return False
        else:
            for dim in shape:
                if type(dim) is not int or dim < 1:
                    return False
        if read_only:
            readonly.add(position)
        kinds.append(kind)
        onchip.append(on)
        shapes.append(shape)
    c.buf_ids, c.buf_kind, c.buf_onchip, c.buf_shape = range(len(kinds)), kinds, onchip, shapes
    c.readonly = readonly
    return True


def _fast_counters(counters: list, c: Compiled, type=type, int=int) -> bool:
    position = -1
    for counter in counters:
        position += 1
        cid, init = counter["id"], counter.get("init", 0)
        if type(counter) is not dict or cid != position or type(cid) is not int or type(init) is not int or init:
            return False
    c.counter_ids = range(len(counters))
    return True


def _fast_tasks(tasks: list, c: Compiled, own_sms: bool = False, type=type, int=int, list=list, dict=dict,
                str=str, len=len) -> bool:
    # One tight loop that appends each task's fields to the columns, with the queue predecessors
    # and producer counts that hb.Graph would otherwise work out again, and whether every wait is
    # met by producers listed before its task (then the document order is an execution order, and
    # hb.run needs no worklist).
    ids, sms, outs_c, inputs, outputs, waits_of, qpred, boxes_of = [], [], [], [], [], [], [], []
    # the columns hold every task that passed, so that, should a later one fail, the careful
    # reader goes on from there (see _tasks)
    c.task_ids, c.sm, c.out, c.inputs, c.outputs = ids, sms, outs_c, inputs, outputs
    c.waits, c.boxes = waits_of, boxes_of
    num_sms, shapes, readonly = c.num_sms, c.buf_shape, c.readonly
    buffers, counters = len(shapes), len(c.counter_ids)
    if num_sms > _MAX_FAST_SMS and not own_sms:
        return False
    last = [-1] * num_sms  # SM -> its last task so far
    made = [0] * counters  # producers per counter, so far
    in_order = ids_in_place = True
    no_waits, no_params, no_boxes = _EMPTY, _EMPTY_DICT, _NO_BOXES
    max_inputs, max_outputs, max_waits = MAX_INPUTS, MAX_OUTPUTS, MAX_WAITS
    i = -1  # a counter of our own: cheaper than enumerate's tuples
    for t in tasks:
        i += 1
        # one statement per field: a multiple assignment of more than three builds a tuple
        tid = t["id"]
        sm = i if own_sms else t["sm"]
        oc = t["out_counter"]
        ins = t["inputs"]
        outs = t["outputs"]
        waits = t.get("waits", no_waits)
        if (type(t) is not dict or type(tid) is not int or type(sm) is not int or sm < 0 or sm >= num_sms
                or type(oc) is not int or oc < 0 or oc >= counters or type(ins) is not list
                or type(outs) is not list or type(waits) is not list or len(ins) > max_inputs
                or len(outs) > max_outputs or len(waits) > max_waits or type(t["op"]) is not str
                or type(t.get("params", no_params)) is not dict):
            return False
        for b in ins:
            if type(b) is not int or b < 0 or b >= buffers:
                return False
        for b in outs:
            if type(b) is not int or b < 0 or b >= buffers or b in readonly:
                return False
        if tid != i:  # ids equal to positions are unique; others are checked at the end
            ids_in_place = False
        if waits:
            wlist = []
            for w in waits:
                k, counter = w["threshold"], w["counter"]
                if (type(w) is not dict or type(k) is not int or k < 1 or type(counter) is not int
                        or counter < 0 or counter >= counters):
                    return False
                if made[counter] < k:  # fewer than k producers listed before this task
                    in_order = False
                wlist.append((counter, k))
        else:
            wlist = no_waits
        regions = t.get("regions")
        boxes = no_boxes if regions is None else _fast_boxes(regions, outs, shapes)
        made[oc] += 1
        ids.append(tid)
        sms.append(sm)
        outs_c.append(oc)
        inputs.append(ins)
        outputs.append(outs)
        waits_of.append(wlist)
        qpred.append(last[sm])
        boxes_of.append(boxes)
        last[sm] = i
    programs = num_sms - last.count(-1)
    if programs > c.max_resident or not ids_in_place and len(set(ids)) < len(ids):
        return False
    c.links = (qpred, made, in_order, programs)
    return True


def _fast_boxes(regions: list, outs: list, shapes: list, type=type, int=int, list=list, len=len) -> dict:
    """The boxes of a task's regions by buffer index (= id here; ``outs`` are checked already);
    raises at a doubt."""
    if type(regions) is not list:
        raise ValueError("regions is not a list")
    boxes = {}
    for region in regions:
        b, box = region["buffer"], region["box"]
        if type(region) is not dict or type(b) is not int or b not in outs or type(box) is not list:
            raise ValueError("region of a buffer the task does not write")
        shape = shapes[b]
        if len(box) != len(shape):
            raise ValueError("bad box")
        d = 0  # _box_ok, inlined (and cheaper without zip)
        for pair in box:
            if type(pair) is not list:
                raise ValueError("bad box")
            lo, hi = pair  # raises ValueError unless a pair
            if type(lo) is not int or type(hi) is not int or lo < 0 or hi <= lo or hi > shape[d]:
                raise ValueError("bad box")
            d += 1
        boxes[b] = box
    return boxes
