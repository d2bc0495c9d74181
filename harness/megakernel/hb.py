"""Happens-before for a compiled schedule: which task must complete before which may start.

The relation is exact. A task may start once its SM predecessor finished and each wait
``counter >= k`` holds. With full waits only (k == number of producers), "w must precede t" is
reachability over producer->waiter and queue edges, kept as Python-int bitsets. A partial wait
(1 <= k < N) makes the relation disjunctive, so for tasks downstream of one the answer comes from
the definition itself: t needs w iff t cannot complete in the least fixpoint of the schedule with
w removed (``Graph.completable(excluded=w)``).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.megakernel.structure import Compiled


class Graph:
    """Queue links, producers and waiters of a compiled schedule.

    ``qpred`` (queue predecessor or -1) and ``counts`` (producers per counter) are always needed;
    ``producers()`` (the producers of each counter) only to diagnose deadlocks and partial waits, and
    ``qsucc``, ``waiters``, ``need0`` only by ``completable`` (witnesses, partial waits), so those
    are built on first use. ``in_order``: the reader found every wait met by producers listed
    before its task, i.e. the document order is an execution order (False when not known).
    ``programs``: how many SMs have tasks."""

    _links = _prods = None  # (class defaults: set on the instance when first worked out)

    def __init__(self, c: Compiled):
        self.c = c
        if c.links is not None:
            self.qpred, self.counts, self.in_order, self.programs = c.links
            return
        self.in_order = False  # not known: run() takes the general path, which is always right
        self.qpred = qpred = [-1] * len(c.task_ids)
        last: dict[int, int] = {}
        for i, sm in enumerate(c.sm):
            qpred[i] = last.get(sm, -1)
            last[sm] = i
        self.programs = len(last)
        self.counts = counts = [0] * len(c.counter_ids)
        for counter in c.out:
            counts[counter] += 1

    def producers(self) -> list[list[int]]:
        """The producers of each counter, in task order: worked out on first use (deadlocks and
        partial waits only), without functools.cached_property, whose lock costs more than the
        list does on the small schedules that dominate the corpus."""
        if self._prods is None:
            prods: list[list[int]] = [[] for _ in self.counts]
            for i, counter in enumerate(self.c.out):
                prods[counter].append(i)
            self._prods = prods
        return self._prods

    def links(self) -> tuple[list[int], list[list[tuple[int, int]]], list[int]]:
        """(qsucc, waiters, need0): queue successors, (task, threshold) waiting on each counter,
        and how many conditions (queue predecessor, waits) each task starts with."""
        if self._links is None:
            c, qpred = self.c, self.qpred
            qsucc = [-1] * len(qpred)
            for i, p in enumerate(qpred):
                if p >= 0:
                    qsucc[p] = i
            waiters: list[list[tuple[int, int]]] = [[] for _ in self.counts]
            need0 = [0 if p < 0 else 1 for p in qpred]
            for i, waits in enumerate(c.waits):
                if waits:
                    need0[i] += len(waits)
                    for counter, k in waits:
                        waiters[counter].append((i, k))
            self._links = qsucc, waiters, need0
        return self._links

    def completable(self, excluded=()) -> list[int]:
        """Tasks in an order a sequential execution could complete them (never those in
        ``excluded``, a container of task indices)."""
        qsucc, waiters, need0 = self.links()
        need, done = need0[:], [0] * len(self.counts)
        out = self.c.out
        ready = [i for i, n in enumerate(need) if n == 0 and i not in excluded]
        order: list[int] = []
        while ready:
            i = ready.pop()
            order.append(i)
            counter = out[i]
            n = done[counter] = done[counter] + 1
            for t, k in waiters[counter]:
                if k == n:
                    need[t] -= 1
                    if need[t] == 0 and t not in excluded:
                        ready.append(t)
            s = qsucc[i]
            if s >= 0:
                need[s] -= 1
                if need[s] == 0 and s not in excluded:
                    ready.append(s)
        return order


def run(g: Graph) -> tuple[Sequence[int], "Order | None", tuple[list[int], list[bool]] | None]:
    """One least-fixpoint run: (order, Order, None) when every task completes; on a deadlock
    (partial order, None, (completions per counter, which tasks completed)), the state the
    diagnosis starts from. This is the validator's hot path. Which tasks complete does not
    depend on the order they are tried in (counters only grow), nor do the full-wait ancestors
    (a full wait needs every producer, whatever the order), so any execution order gives the
    same result. Builders emit tasks in an order that already is one (``g.in_order``): then
    that is used."""
    if g.in_order:
        order = range(len(g.qpred))
    else:
        order, done, finished = _execution_order(g)
        if len(order) < len(g.qpred):
            return order, None, (done, finished)
    return order, Order(g, order), None


def _execution_order(g: Graph) -> tuple[list[int], list[int], list[bool]]:
    """Tasks in an order a sequential execution completes them, how often each counter was
    incremented, and which tasks completed. A sweep in document order completes what it can,
    deferring a task it cannot start yet (and with it the rest of its SM's queue); a worklist
    over the deferred tasks finishes from the state the sweep reached."""
    c = g.c
    out, qpred = c.out, g.qpred
    done = [0] * len(g.counts)
    finished = [False] * len(out)
    order: list[int] = []
    deferred: list[int] = []
    i = -1  # a counter of our own: cheaper than enumerate's tuples
    for waits in c.waits:
        i += 1
        p = qpred[i]
        if p >= 0 and not finished[p]:
            deferred.append(i)
            continue
        for counter, k in waits:
            if done[counter] < k:
                deferred.append(i)
                break
        else:
            finished[i] = True
            done[out[i]] += 1
            order.append(i)
    for t in deferred:  # the worklist only if the sweep left some deferred task able to start
        p = qpred[t]
        if p >= 0 and not finished[p]:
            continue
        for counter, k in c.waits[t]:
            if done[counter] < k:
                break
        else:
            _finish(g, order, deferred, done, finished)
            break
    return order, done, finished


def _finish(g: Graph, order: list[int], deferred: list[int], done: list[int], finished: list[bool]) -> None:
    """Complete ``order`` with a worklist over the deferred tasks, from the sweep's state. A
    deferred task needs its unfinished queue predecessor and each wait not yet met. A wait is met
    when its counter reaches exactly the threshold (counters grow by one), so only the deferred
    tasks' unmet waits need watching: tasks that finished met theirs earlier."""
    out, qpred, waits_of = g.c.out, g.qpred, g.c.waits
    need: dict[int, int] = {}
    succ: dict[int, int] = {}                       # unfinished queue predecessor -> its successor
    watch: dict[int, list[tuple[int, int]]] = {}    # counter -> (deferred task, threshold)
    ready = []
    for t in deferred:
        n = 0
        p = qpred[t]
        if p >= 0 and not finished[p]:
            succ[p] = t
            n = 1
        for counter, k in waits_of[t]:
            if done[counter] < k:
                n += 1
                watch.setdefault(counter, []).append((t, k))
        need[t] = n
        if n == 0:
            ready.append(t)
    while ready:
        i = ready.pop()
        order.append(i)
        finished[i] = True
        o = out[i]
        n = done[o] = done[o] + 1
        for t, k in watch.get(o, ()):
            if k == n:
                need[t] -= 1
                if need[t] == 0:
                    ready.append(t)
        s = succ.get(i)
        if s is not None:
            need[s] -= 1
            if need[s] == 0:
                ready.append(s)


class Order:
    """Must-precede over a deadlock-free schedule (``order`` = a complete execution order)."""

    _without: dict[int, int] | None = None  # completable_without's memo, made on first use

    def __init__(self, g: Graph, order: Sequence[int]):
        self.g = g
        anc = _full_wait_ancestors(g, order)
        self.partial = anc is None  # some wait is partial
        if anc is None:
            anc, self.tainted = _ancestors_and_taint(g, order)
        else:
            self.tainted = [False] * len(anc)  # i has a partial wait on itself or upstream
        self.anc = anc  # tasks forced before i by full waits and queue order

    def before(self, w: int, t: int) -> bool:
        """True iff in every execution w completes before t starts (never for w == t)."""
        if (self.anc[t] >> w) & 1:
            return True
        if w == t or not self.tainted[t]:
            return False
        return not (self.completable_without(w) >> t) & 1

    def completable_without(self, w: int) -> int:
        if self._without is None:
            self._without = {}
        mask = self._without.get(w)
        if mask is None:
            mask = 0
            for i in self.g.completable(excluded=(w,)):
                mask |= 1 << i
            self._without[w] = mask
        return mask

    def missing(self, required: int, t: int) -> int:
        """The tasks of bitset ``required`` that are not forced before t."""
        miss = required & ~self.anc[t]
        if miss and self.tainted[t]:
            for w in bits(miss):
                if self.before(w, t):
                    miss &= ~(1 << w)
        return miss

    def all_before(self, first: int, then: int) -> bool:
        """Every task of bitset ``first`` precedes every task of bitset ``then``."""
        anc, tainted = self.anc, self.tainted
        while then:
            low = then & -then
            then ^= low
            y = low.bit_length() - 1
            if first & ~anc[y] and (not tainted[y] or self.missing(first, y)):
                return False
        return True

    def ordered(self, a: int, b: int) -> bool:
        return self.before(a, b) or self.before(b, a)


def _full_wait_ancestors(g: Graph, order: Sequence[int]) -> list[int] | None:
    """The ancestors of every task when every wait is a full wait (None at the first partial
    one): the common case, so it gets a loop without the taint bookkeeping below."""
    c, counts = g.c, g.counts
    qpred, waits_of, out = g.qpred, c.waits, c.out
    anc = [0] * len(qpred)
    cmask = [0] * len(counts)  # the producers of each counter and their ancestors, so far
    for i in order:
        p = qpred[i]
        mask = anc[p] | (1 << p) if p >= 0 else 0
        for counter, k in waits_of[i]:
            if k < counts[counter]:
                return None
            mask |= cmask[counter]
        anc[i] = mask
        cmask[out[i]] |= mask | (1 << i)
    return anc


def _ancestors_and_taint(g: Graph, order: Sequence[int]) -> tuple[list[int], list[bool]]:
    """Ancestors over full waits and queue order, and which tasks have a partial wait on
    themselves or upstream (for those, must-precede needs the fixpoint without w)."""
    c, counts = g.c, g.counts
    qpred, waits_of, out = g.qpred, c.waits, c.out
    size = len(qpred)
    anc, tainted = [0] * size, [False] * size
    cmask, ctaint = [0] * len(counts), [False] * len(counts)
    for i in order:
        p = qpred[i]
        if p >= 0:
            mask, taint = anc[p] | (1 << p), tainted[p]
        else:
            mask, taint = 0, False
        for counter, k in waits_of[i]:
            if k >= counts[counter]:
                mask |= cmask[counter]
                if ctaint[counter]:
                    taint = True
            else:
                taint = True
        anc[i] = mask
        o = out[i]
        cmask[o] |= mask | (1 << i)
        if taint:
            tainted[i] = ctaint[o] = True
    return anc, tainted


def bits(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``, lowest first."""
    found = []
    while mask:
        low = mask & -mask
        found.append(low.bit_length() - 1)
        mask ^= low
    return found
