"""Static validator: proves a schedule deadlock- and race-free, or names why not, with a witness.

``validate(doc) -> Verdict`` never raises. Three passes: structure (``structure.py``), deadlock
(a least-fixpoint run of the counters; stuck tasks are diagnosed), races (exact happens-before,
``hb.py``). The semantics it decides are written down in docs/MEGAKERNEL_SUITE.md; the oracle
(``oracle.py``) decides the same semantics by exploring interleavings, with separate code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.errors import UserError
from harness.megakernel import amk_io, fastpath, loader_check
from harness.megakernel.hb import Graph, Order, bits, run
from harness.megakernel.opcheck import op_findings
from harness.megakernel.placement import needs_placement
from harness.megakernel.structure import Compiled, compile_document, violation

DEADLOCK_CLASSES = ("wait_unproduced", "threshold_exceeds_producers", "self_wait", "cycle", "queue_order",
                    "dependency_cycle")
RACE_CLASSES = ("raw", "kv_before_append", "first_k_of_n", "waw", "war_page", "onchip_cross_sm",
                "read_unwritten", "output_unwritten")
STRUCTURAL_CLASSES = ("malformed", "dangling_ref", "caps_exceeded", "bad_threshold", "sm_out_of_range",
                      "not_co_resident", "write_readonly", "tile_out_of_bounds", "bad_op")
UNSAFE = loader_check.UNSAFE
_RACE_LIMIT = 8  # violations kept per verdict; the rest are counted in stats['more_violations']


@dataclass
class Verdict:
    ok: bool
    violations: list[dict] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    # For schedules AMK's loader places (loader_check.py): safe_any_placement, safe_amk_loader or
    # unsafe, and the placed document a witness refers to (None when it was not built:
    # loader_check.placed_document builds it).
    safety: str | None = None
    placed: object = None

    @classmethod
    def proven_unsafe(cls, explain) -> Verdict:
        """An unsafe verdict the native fast path proved (``fastpath.judge``); ``explain()`` gives
        the full verdict, which is worked out when its violations, stats or placed document are
        first read."""
        return _ProvenUnsafe(explain)

    @property
    def classes(self) -> list[str]:
        return sorted({v["class"] for v in self.violations})

    @property
    def family(self) -> str | None:
        return self.violations[0]["family"] if self.violations else None

    def to_dict(self) -> dict:
        out = {"verdict": "accepted" if self.ok else "rejected", "ok": self.ok,
               "classes": self.classes, "violations": self.violations, "stats": self.stats}
        if self.safety is not None:
            out["safety"] = self.safety
        return out

    def report(self) -> str:
        head = "ACCEPTED" if self.ok else "REJECTED"
        lines = [f"{head}: {self.stats.get('tasks', '?')} tasks on {self.stats.get('sms', '?')} SMs"]
        if self.safety is not None:
            lines[0] += f" ({_SAFETY_WORDS[self.safety]})"
        for v in self.violations:
            lines.append(f"  [{v['family']}/{v['class']}] {v['message']}")
            if v["witness"]:
                lines.append(f"      witness: {v['witness']}")
        return "\n".join(lines)


class _ProvenUnsafe(Verdict):
    """``ok`` and ``safety`` are final; the rest comes from ``explain()`` on first read. Should that
    disagree (the document was changed between validate() and the read), the verdict names the
    change as an internal error instead of giving violations of another document."""

    def __init__(self, explain):  # (not the dataclass's: the details are filled in by _details)
        self.ok, self.safety, self._explain, self._full = False, UNSAFE, explain, None

    def _details(self) -> dict:
        if self._full is None:
            try:
                full = self._explain()
            except Exception as error:  # a validator bug must still be visible, as in validate()
                full = _internal(error)
            if full.safety is not None and (full.ok or full.safety != UNSAFE):
                full = Verdict(False, [violation("internal_error", "structural", "the schedule changed after "
                                                 "validate() proved it unsafe; validate it again")],
                               {"phase": "internal"})
            self._full = {"violations": full.violations, "stats": full.stats, "placed": full.placed}
        return self._full


def _detail(name: str) -> property:
    def get(self):
        return self._details()[name]

    def put(self, value):
        self._details()[name] = value

    return property(get, put)


for _name in ("violations", "stats", "placed"):
    setattr(_ProvenUnsafe, _name, _detail(_name))

_SAFETY_WORDS = {"safe_any_placement": "safe under any placement",
                 "safe_amk_loader": "safe under AMK's loader placement, not under every placement",
                 "unsafe": "unsafe"}


def validate(doc) -> Verdict:
    """The verdict on one schedule document (a parsed JSON value of any shape). A schedule with
    unassigned SMs (or AMK's queue order) is judged as AMK's loader places it and under every
    placement (``loader_check.py``; the verdict's ``safety`` says which holds). An AMK IR
    document as AMK writes it gets the verdict of its import (``amk_io.from_amk``)."""
    if amk_io.is_amk(doc):
        return _amk(doc)
    if type(doc) is dict and doc.get("queues") == "amk_loader":
        return _placed_by_loader(doc)
    c, found = compile_document(doc)
    if c is None:  # (a null SM reads as malformed here: only then is it worth looking for one)
        if needs_placement(doc):
            return _placed_by_loader(doc)
        return Verdict(False, found, {"phase": "structure"})
    if doc.get("ops") == "amk":
        found = op_findings(doc)
        if found:
            return Verdict(False, found, {"phase": "ops"})
    try:
        return _semantic(c)
    except Exception as error:  # a validator bug must still fail safe, and be visible
        return _internal(error)


def _amk(doc: dict) -> Verdict:
    """The verdict of ``doc``'s import. The native fast path reads the document as the import
    would make it, so the import runs only where Python decides, or names a proven violation."""
    judged = fastpath.judge(doc)
    if judged:
        return loader_check.accepted(judged, Verdict)
    if judged is False:
        return Verdict.proven_unsafe(lambda: _imported(doc))
    return _imported(doc)


def _imported(doc: dict) -> Verdict:
    """The import's verdict from the Python passes alone (the native reader has read ``doc`` as the
    import would make it and said what it can)."""
    try:
        imported = amk_io.from_amk(doc)
    except UserError as error:
        return Verdict(False, [violation("malformed", "structural", str(error))], {"phase": "structure"})
    except Exception as error:  # (a value the import cannot copy, e.g. a meta that is no mapping)
        return Verdict(False, [violation("malformed", "structural", f"not an importable AMK IR document: "
                                         f"{type(error).__name__}: {error}")], {"phase": "structure"})
    return _placed_by_loader(imported, loader_check.explain)  # (an import says "queues": "amk_loader")


def _placed_by_loader(doc: dict, judge_placed=loader_check.check) -> Verdict:
    try:
        return judge_placed(doc, validate, Verdict, _semantic)
    except Exception as error:  # a validator bug must still fail safe, and be visible
        return _internal(error)


def _internal(error: Exception) -> Verdict:
    return Verdict(False, [violation("internal_error", "structural",
                                     f"validator error {type(error).__name__}: {error}")],
                   {"phase": "internal"})


def _semantic(c: Compiled) -> Verdict:
    g = Graph(c)
    order, hb, stall = run(g)
    # (each branch builds its stats whole: cheaper than adding keys one by one)
    if hb is None:
        stats = {"tasks": len(c.task_ids), "sms": g.programs, "counters": len(c.counter_ids),
                 "phase": "deadlock"}
        return Verdict(False, _deadlocks(c, g, *stall), stats)
    found = _races(c, g, hb)
    stats = {"tasks": len(c.task_ids), "sms": g.programs, "counters": len(c.counter_ids),
             "phase": "races", "partial_waits": hb.partial}
    if found.more:
        stats["more_violations"] = found.more
    return Verdict(not found, list(found), stats)


# --------------------------------------------------------------------------- deadlocks

def _deadlocks(c: Compiled, g: Graph, done: list[int], finished: list[bool]) -> list[dict]:
    """``done``: how often each counter was incremented; ``finished``: which tasks completed."""
    stuck = [i for i in range(len(finished)) if not finished[i]]
    found, rooted = _root_causes(c, g, stuck, done)
    cycle = _find_cycle(c, g, stuck, done, rooted, finished)
    if cycle:
        found.append(cycle)
    if not found:  # unreachable by construction; kept so a verdict always names a reason
        found.append(violation("cycle", "deadlock", f"{len(stuck)} tasks can never start",
                               stuck=[c.task_ids[i] for i in stuck[:10]]))
    return found[:_RACE_LIMIT]


def _root_causes(c, g, stuck, done) -> tuple[list[dict], set[int]]:
    found, rooted = [], set()
    for t in stuck:
        tid = c.task_ids[t]
        for counter, k in c.waits[t]:
            if done[counter] >= k:
                continue
            n, cid = g.counts[counter], c.counter_ids[counter]
            if n == 0:
                found.append(violation("wait_unproduced", "deadlock",
                                       f"task {tid} waits on counter {cid}, which no task increments",
                                       task=tid, counter=cid))
            elif k > n:
                found.append(violation("threshold_exceeds_producers", "deadlock",
                                       f"task {tid} waits for counter {cid} >= {k}, but only {n} tasks "
                                       "increment it", task=tid, counter=cid, threshold=k, producers=n))
            elif c.out[t] == counter and k > n - 1:  # t is one of the producers
                found.append(violation("self_wait", "deadlock",
                                       f"task {tid} waits for counter {cid} >= {k}, which needs its own "
                                       "increment", task=tid, counter=cid, threshold=k))
            else:
                continue
            rooted.add(t)
    return found, rooted


def _blockers(c, g, t, done, finished, producers) -> list[tuple[int, int]]:
    """(task, counter index) pairs t cannot start without, last first (they are popped off the
    end); counter -1 is the queue edge."""
    edges = []
    p = g.qpred[t]
    if p >= 0 and not finished[p]:
        edges.append((p, -1))
    for counter, k in c.waits[t]:
        if done[counter] < k:
            for q in producers[counter]:
                if not finished[q] and q != t:
                    edges.append((q, counter))
    edges.reverse()
    return edges


def _find_cycle(c, g, stuck, done, rooted, finished) -> dict | None:
    """A cycle of 'cannot start until' edges among stuck tasks (iterative DFS; rooted tasks are
    left out: their own unmet wait is reported)."""
    state = [0] * len(finished)  # per task: 1 on the path, 2 explored, 3 rooted
    for t in rooted:
        state[t] = 3
    producers = None  # worked out when the first start needs them
    for start in stuck:
        if state[start]:
            continue
        producers = producers or g.producers()
        path, edge_kinds = [start], []
        pending = [_blockers(c, g, start, done, finished, producers)]  # per path node: the edges not yet followed
        state[start] = 1
        while path:
            edges = pending[-1]
            if not edges:
                state[path.pop()] = 2
                pending.pop()
                if edge_kinds:
                    edge_kinds.pop()
                continue
            node, kind = edges.pop()
            seen = state[node]
            if seen == 1:
                return _cycle_violation(c, path[path.index(node):], edge_kinds[path.index(node):] + [kind])
            if seen:
                continue
            state[node] = 1
            path.append(node)
            edge_kinds.append(kind)
            pending.append(_blockers(c, g, node, done, finished, producers))
    return None


def _cycle_violation(c, nodes: list[int], counters: list[int]) -> dict:
    ids = [c.task_ids[i] for i in nodes]
    kinds = ["queue" if k < 0 else f"counter {c.counter_ids[k]}" for k in counters]
    steps = [f"{a} waits for {b} ({k})" for a, b, k in zip(ids, ids[1:] + ids[:1], kinds)]
    if "queue" in kinds:
        return violation("queue_order", "deadlock", "per-SM queue order contradicts the graph: "
                         + "; ".join(steps), cycle=ids, edges=kinds)
    return violation("cycle", "deadlock", "producer/consumer cycle: " + "; ".join(steps),
                     cycle=ids, edges=kinds)


# --------------------------------------------------------------------------- races

class _Found(list):
    """Violations, at most _RACE_LIMIT kept; callers test ``full`` before building one."""

    more = 0

    @property
    def full(self) -> bool:
        return len(self) >= _RACE_LIMIT

    def add(self, v: dict) -> None:
        if self.full:
            self.more += 1
        else:
            self.append(v)

    def skip(self) -> bool:
        """True (and counted) when the list is full, so the caller need not build the violation."""
        if self.full:
            self.more += 1
            return True
        return False


def _races(c: Compiled, g: Graph, hb: Order) -> _Found:
    found = _Found()
    writers = [0] * len(c.buf_ids)
    bit = 1
    for outs in c.outputs:  # (a running bit: cheaper than enumerate and a shift per task)
        for b in outs:
            writers[b] |= bit
        bit <<= 1
    _reads(c, g, hb, writers, found)
    unwritten = _write_write(c, hb, writers, found)
    if c.page_of:
        _pages(c, hb, writers, found)
    for b in unwritten:
        found.add(violation("output_unwritten", "race", f"output buffer {c.buf_ids[b]} is never "
                            "written, so the host reads garbage", buffer=c.buf_ids[b]))
    return found


def _sm_masks(c: Compiled) -> dict[int, int]:
    masks: dict[int, int] = {}
    for i, sm in enumerate(c.sm):
        masks[sm] = masks.get(sm, 0) | (1 << i)
    return masks


def _reads(c, g, hb: Order, writers: list[int], found: _Found) -> None:
    """Rule 2: every other writer of a buffer a task reads must precede it (and, on chip, run on
    its SM). Per task: ``bit`` is the task itself, ``hidden`` the writers that may not precede it
    (neither itself nor a full-wait ancestor)."""
    kinds, onchip, readonly, sm_masks, anc, tainted = c.buf_kind, c.buf_onchip, c.readonly, None, hb.anc, hb.tainted
    t, bit = -1, 1
    for inputs in c.inputs:
        t += 1
        if t:
            bit <<= 1
        hidden = None
        for b in inputs:
            if b in readonly:
                continue
            w = writers[b]
            # unwritten: no other writer. A KV cache nobody appends to this step holds the
            # earlier steps' state (safe to read), and a task's own append counts.
            if not w and kinds[b] == "KV_CACHE":
                continue
            if (not w or w == bit) and kinds[b] != "KV_CACHE":
                if found.skip():
                    continue
                found.add(violation("read_unwritten", "race", f"task {c.task_ids[t]} reads "
                                    f"{kinds[b]} buffer {c.buf_ids[b]}, which no other task writes this step",
                                    task=c.task_ids[t], buffer=c.buf_ids[b]))
                continue
            if hidden is None:
                hidden = ~(anc[t] | bit)
            missing = w & hidden
            if missing and tainted[t]:
                missing = hb.missing(w & ~bit, t)
            if onchip[b]:
                sm_masks = sm_masks or _sm_masks(c)
                cross = w & ~bit & ~sm_masks[c.sm[t]]
                if cross:
                    if not found.skip():
                        found.add(_onchip(c, _lowest(cross), t, b))
                    continue
            if missing and not found.skip():
                found.add(_read_race(c, g, hb, _lowest(missing), t, b, missing.bit_count()))


def _lowest(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def _onchip(c, w, t, b) -> dict:
    return violation("onchip_cross_sm", "race", f"{c.buf_kind[b]} buffer {c.buf_ids[b]} is on-chip, "
                     f"written by task {c.task_ids[w]} on SM {c.sm[w]} and read by task "
                     f"{c.task_ids[t]} on SM {c.sm[t]}, which cannot see it",
                     writer=c.task_ids[w], reader=c.task_ids[t], buffer=c.buf_ids[b])


def _read_race(c, g, hb: Order, w: int, t: int, b: int, count: int) -> dict:
    ids = c.task_ids
    witness = {"writer": ids[w], "reader": ids[t], "buffer": c.buf_ids[b], "unordered_writers": count}
    partial = _partial_cause(c, g, hb, w, t) if hb.tainted[t] else None
    if partial:
        waiter, counter, k, n = partial
        return violation("first_k_of_n", "race", f"task {ids[t]} reads buffer {c.buf_ids[b]} after a "
                         f"partial wait (task {ids[waiter]}: counter {c.counter_ids[counter]} >= {k} of "
                         f"{n} producers); the count can be reached without writer {ids[w]}",
                         **witness, waiter=ids[waiter], counter=c.counter_ids[counter], threshold=k,
                         producers=n)
    # (the witness dict as it is: passing it as **witness would copy it into keywords)
    if c.buf_kind[b] == "KV_CACHE":
        return {"class": "kv_before_append", "family": "race",
                "message": f"task {ids[t]} reads KV cache {c.buf_ids[b]} without being ordered after this "
                           f"step's append (task {ids[w]})", "witness": witness}
    when = "before" if (hb.anc[w] >> t) & 1 else "unordered with"  # wording only
    return {"class": "raw", "family": "race",
            "message": f"task {ids[t]} reads buffer {c.buf_ids[b]} {when} its writer task {ids[w]}",
            "witness": witness}


def _partial_cause(c, g, hb: Order, w: int, t: int):
    """A partial wait at or upstream of t whose producers lead back to w (for naming)."""
    for x in [t] + bits(hb.anc[t]):
        for counter, k in c.waits[x]:
            producers = g.producers()[counter]
            if k < len(producers) and any(p == w or (hb.anc[p] >> w) & 1 for p in producers):
                return x, counter, k, len(producers)
    return None


def _box(c, i, b):
    return c.boxes[i].get(b) or [[0, d] for d in c.buf_shape[b]]


def _write_write(c, hb: Order, writers: list[int], found: _Found) -> list[int]:
    """Adds the write-after-write races; returns the output buffers nobody writes (one scan for
    both)."""
    anc, kinds, unwritten = hb.anc, c.buf_kind, []
    b = -1
    for mask in writers:
        b += 1
        if not mask:
            if kinds[b] == "IO_OUTPUT":
                unwritten.append(b)
        elif mask & (mask - 1) and not _chain(anc, mask):
            clash = _first_overlap(c, hb, b, mask)
            if clash:
                found.add(clash)
    return unwritten


def _chain(anc: list[int], mask: int) -> bool:
    """The tasks of bitset ``mask`` are totally ordered by the full-wait ancestors, so no two of
    them can overlap (the common case for several writers of one buffer; no boxes to compare).
    ``anc`` is a strict partial order, and a set of m elements of one is a chain iff the numbers
    of members below each element are all different (then they are 0, 1, ..., m - 1)."""
    seen = 0
    for i in bits(mask):
        below = 1 << (anc[i] & mask).bit_count()
        if seen & below:
            return False
        seen |= below
    return True


def _first_overlap(c, hb: Order, b: int, mask: int) -> dict | None:
    """Sweep the writers' boxes along the last dimension; compare only boxes that overlap there."""
    spans = []
    for i in bits(mask):
        box = _box(c, i, b)
        spans.append((box[-1][0], i, box))
    spans.sort()  # by the low end, then by task: ids are unique, so boxes are never compared
    active: list[tuple[int, int, list]] = []
    for span in spans:
        lo, i, box = span
        if active:
            active = [item for item in active if item[2][-1][1] > lo]
        for _, j, other in active:
            if _conflict(c, hb, i, j, b, box, other):
                return violation("waw", "race", f"tasks {c.task_ids[j]} and {c.task_ids[i]} write "
                                 f"overlapping regions of buffer {c.buf_ids[b]} unordered",
                                 writers=[c.task_ids[j], c.task_ids[i]], buffer=c.buf_ids[b],
                                 boxes=[other, box])
        active.append(span)
    return None


def _conflict(c, hb, i, j, b, box, other) -> bool:
    if c.buf_onchip[b] and c.sm[i] != c.sm[j]:
        return False  # separate on-chip copies; a reader of both is caught as onchip_cross_sm
    for (lo_a, hi_a), (lo_b, hi_b) in zip(box, other):
        if hi_a <= lo_b or hi_b <= lo_a:
            return False
    return not hb.ordered(i, j)


def _pages(c: Compiled, hb: Order, writers: list[int], found: _Found) -> None:
    access = writers[:]  # accessors: the writers and the readers
    for i, ins in enumerate(c.inputs):
        bit = 1 << i
        for b in ins:
            access[b] |= bit
    by_page: dict[int, list[int]] = {}
    for b, page in c.page_of.items():
        by_page.setdefault(page, []).append(b)
    groups = _sm_masks(c)
    for page, members in by_page.items():
        for x, a in enumerate(members):
            for b in members[x + 1:]:
                v = _alias(c, hb, page, a, b, access, groups)
                if v:
                    found.add(v)


def _alias(c, hb: Order, page, a, b, access, groups) -> dict | None:
    scopes = groups.values() if c.buf_onchip[a] else [-1]
    for scope in scopes:
        first, second = access[a] & scope, access[b] & scope
        if not first or not second:
            continue
        if hb.all_before(first, second) or hb.all_before(second, first):
            continue
        return violation("war_page", "race", f"buffers {c.buf_ids[a]} and {c.buf_ids[b]} share page "
                         f"{page} but their live ranges are not ordered (a writer of one may run before "
                         "a reader of the other finished)", page=page,
                         buffers=[c.buf_ids[a], c.buf_ids[b]],
                         tasks=[[c.task_ids[i] for i in bits(first)], [c.task_ids[i] for i in bits(second)]])
    return None
