"""Happens-before for a compiled schedule: which task must complete before which may start.

The relation is exact. A task may start once its SM predecessor finished and each wait
``counter >= k`` holds. With full waits only (k == number of producers), "w must precede t" is
reachability over producer->waiter and queue edges, kept as Python-int bitsets. A partial wait
(1 <= k < N) makes the relation disjunctive, so for tasks downstream of one the answer comes from
the definition itself: t needs w iff t cannot complete in the least fixpoint of the schedule with
w removed (``Graph.completable(excluded=w)``).
"""

from __future__ import annotations

from harness.megakernel.structure import Compiled


class Graph:
    """Queue links, producers and waiters of a compiled schedule."""

    def __init__(self, c: Compiled):
        self.c = c
        if c.links is not None:
            self.qpred, self.qsucc, self.prods, self.waiters, self.need0 = c.links
            return
        size = len(c.task_ids)
        self.qpred, self.qsucc = qpred, qsucc = [-1] * size, [-1] * size
        last: dict[int, int] = {}
        for i, sm in enumerate(c.sm):
            prev = last.get(sm)
            if prev is not None:
                qpred[i] = prev
                qsucc[prev] = i
            last[sm] = i
        self.prods = prods = [[] for _ in c.counter_ids]
        for i, counter in enumerate(c.out):
            prods[counter].append(i)
        self.waiters = waiters = [[] for _ in c.counter_ids]
        self.need0 = need0 = [0 if p < 0 else 1 for p in qpred]
        for i, waits in enumerate(c.waits):
            if waits:
                need0[i] += len(waits)
                for counter, k in waits:
                    waiters[counter].append((i, k))

    def completable(self, excluded=()) -> list[int]:
        """Tasks in an order a sequential execution could complete them (never those in
        ``excluded``, a container of task indices)."""
        need, done = self.need0[:], [0] * len(self.prods)
        out, waiters, qsucc = self.c.out, self.waiters, self.qsucc
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


def run(g: Graph) -> tuple[list[int], "Order | None"]:
    """One least-fixpoint run that also builds the full-wait ancestors: (order, Order) when every
    task completes, (partial order, None) on a deadlock. Same result as ``completable`` followed by
    ``Order``, in one loop (this is the validator's hot path)."""
    c = g.c
    need, done = g.need0[:], [0] * len(g.prods)
    counts = [len(p) for p in g.prods]
    out, waiters, qsucc, qpred, waits_of = c.out, g.waiters, g.qsucc, g.qpred, c.waits
    size = len(need)
    anc, tainted = [0] * size, [False] * size
    cmask, ctaint = [0] * len(counts), [False] * len(counts)
    partial = False
    ready = [i for i, n in enumerate(need) if n == 0]
    order: list[int] = []
    while ready:
        i = ready.pop()
        order.append(i)
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
                taint = partial = True
        anc[i] = mask
        o = out[i]
        cmask[o] |= mask | (1 << i)
        if taint:
            tainted[i] = ctaint[o] = True
        n = done[o] = done[o] + 1
        for t, k in waiters[o]:
            if k == n:
                need[t] -= 1
                if need[t] == 0:
                    ready.append(t)
        s = qsucc[i]
        if s >= 0:
            need[s] -= 1
            if need[s] == 0:
                ready.append(s)
    if len(order) < size:
        return order, None
    hb = Order.__new__(Order)
    hb.g, hb.anc, hb.tainted, hb.partial, hb._without = g, anc, tainted, partial, {}
    return order, hb


class Order:
    """Must-precede over a deadlock-free schedule (``order`` = a complete execution order)."""

    def __init__(self, g: Graph, order: list[int]):
        self.g = g
        c, size = g.c, len(order)
        self.anc = anc = [0] * size            # tasks forced before i by full waits and queue order
        self.tainted = tainted = [False] * size  # i has a partial wait on itself or upstream
        partial = False
        counts = [len(p) for p in g.prods]
        cmask, ctaint = [0] * len(counts), [False] * len(counts)
        qpred, waits_of, out = g.qpred, c.waits, c.out
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
                    taint = partial = True
            anc[i] = mask
            o = out[i]
            cmask[o] |= mask | (1 << i)
            if taint:
                tainted[i] = ctaint[o] = True
        self.partial = partial
        self._without: dict[int, int] = {}

    def before(self, w: int, t: int) -> bool:
        """True iff in every execution w completes before t starts (never for w == t)."""
        if (self.anc[t] >> w) & 1:
            return True
        if w == t or not self.tainted[t]:
            return False
        return not (self.completable_without(w) >> t) & 1

    def completable_without(self, w: int) -> int:
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
        return all(not self.missing(first, y) for y in bits(then))

    def ordered(self, a: int, b: int) -> bool:
        return self.before(a, b) or self.before(b, a)


def bits(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``, lowest first."""
    found = []
    while mask:
        low = mask & -mask
        found.append(low.bit_length() - 1)
        mask ^= low
    return found
