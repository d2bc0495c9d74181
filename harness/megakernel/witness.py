"""Turn a validator violation into an interleaving that exhibits it.

The trace (task ids in completion order) ends in a state where the violation shows: the reader
is ready while its writer has not completed, both racing writers are ready, or nothing can start.
``oracle.replay`` runs a trace on the oracle's own machine, so a validator witness can be checked
by the ground-truth code without trusting the validator.
"""

from __future__ import annotations

from harness.megakernel.hb import Graph, Order
from harness.megakernel.structure import compile_document

_READS = ("raw", "kv_before_append", "first_k_of_n", "onchip_cross_sm")


def witness_trace(doc, violation: dict) -> list[int] | None:
    c, problems = compile_document(doc)
    if c is None:
        return None
    g = Graph(c)
    index = {tid: i for i, tid in enumerate(c.task_ids)}
    cls, seen = violation["class"], violation.get("witness", {})
    if cls in _READS:
        excluded = () if cls == "onchip_cross_sm" else (index[seen["writer"]],)
        return _until(c, g.completable(excluded), index[seen["reader"]])
    if cls == "waw":
        return _ids(c, g.completable(tuple(index[t] for t in seen["writers"])))
    if cls == "war_page":
        pair = _unordered_pair(c, g, [[index[t] for t in side] for side in seen["tasks"]])
        return _ids(c, g.completable(pair))
    return _ids(c, g.completable())


def _until(c, order: list[int], stop: int) -> list[int]:
    return _ids(c, order[:order.index(stop)] if stop in order else order)


def _ids(c, order: list[int]) -> list[int]:
    return [c.task_ids[i] for i in order]


def _unordered_pair(c, g: Graph, sides: list[list[int]]) -> tuple:
    order = g.completable()
    if len(order) < len(c.task_ids):
        return ()
    hb = Order(g, order)
    for x in sides[0]:
        for y in sides[1]:
            if x == y or not hb.ordered(x, y):
                return (x, y) if x != y else (x,)
    return ()
