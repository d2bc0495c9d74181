"""Where AutoMegaKernel's loader puts the tasks of a schedule, and the placement-free view.

AMK's tools leave ``"sm": null``; its loader (``vm/loader.py``) validates the program, then:

1. orders the tasks topologically over its dependency edges (every producer of a counter before
   every task waiting on it, whatever the threshold; a task waiting on its own counter is an edge
   to itself). Kahn's algorithm with a first-in first-out queue, seeded with the tasks that have
   no predecessor in increasing id order, each task releasing its successors in increasing id
   order. No such order (a cycle) and the loader refuses the program;
2. keeps the tasks' own SMs when some task has one and every assigned SM is inside the launch
   grid (unassigned tasks then go to SM 0); otherwise it places every task, in that order, on the
   least-loaded SM, load being (bytes so far, flops so far, tasks so far, SM index) from the
   tasks' ``est_bytes`` and ``est_flops``;
3. runs every SM's tasks in the topological order.

The grid is ``min(num_sms, max_resident)`` here (the loader also caps it by the co-residency it
measures on the device, which a static check cannot know). ``placed`` returns the schedule as
the loader would run it, in our format (tasks in topological order, SMs filled in), so the
validator and the oracle judge exactly that. ``unplaced`` gives every task an SM of its own: the
least-ordered placement, so a schedule safe there is safe under every placement whose queues
follow a topological order.
"""

from __future__ import annotations

import heapq
from collections import deque


def needs_placement(doc) -> bool:
    """True for a document the loader places: some task without an SM, or AMK's queue order."""
    if type(doc) is not dict:
        return False
    tasks = doc.get("tasks")
    if type(tasks) is not list:
        return False
    if doc.get("queues") == "amk_loader":
        return True
    for task in tasks:
        if type(task) is dict and task.get("sm", 0) is None:
            return True
    return False


def topological_order(tasks: list[dict]) -> tuple[list[int] | None, list[list[int]]]:
    """(positions of ``tasks`` in the loader's order or None on a cycle, successors per position).
    ``tasks`` must be well-formed (ids unique ints, waits resolved)."""
    producers: dict[int, list[int]] = {}
    for i, t in enumerate(tasks):
        producers.setdefault(t["out_counter"], []).append(i)
    succ: list[set[int]] = [set() for _ in tasks]
    indeg = [0] * len(tasks)
    for i, t in enumerate(tasks):
        for wait in t.get("waits") or ():
            for p in producers.get(wait["counter"], ()):
                if i not in succ[p]:
                    succ[p].add(i)
                    indeg[i] += 1
    ids = [t["id"] for t in tasks]
    ordered_succ = [sorted(s, key=ids.__getitem__) for s in succ]
    ready = deque(sorted((i for i, d in enumerate(indeg) if d == 0), key=ids.__getitem__))
    order: list[int] = []
    need = indeg[:]
    while ready:
        i = ready.popleft()
        order.append(i)
        for j in ordered_succ[i]:
            need[j] -= 1
            if need[j] == 0:
                ready.append(j)
    return (order if len(order) == len(tasks) else None), ordered_succ


def find_cycle(tasks: list[dict], succ: list[list[int]]) -> list[int]:
    """Task ids along one dependency cycle (iterative search over the tasks Kahn left)."""
    state = [0] * len(tasks)  # 0 new, 1 on the path, 2 done
    for start in range(len(tasks)):
        if state[start]:
            continue
        path, pending = [start], [iter(succ[start])]
        state[start] = 1
        while path:
            nxt = next(pending[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                pending.pop()
            elif state[nxt] == 1:
                loop = path[path.index(nxt):]
                return [tasks[i]["id"] for i in loop]
            elif state[nxt] == 0:
                state[nxt] = 1
                path.append(nxt)
                pending.append(iter(succ[nxt]))
    return []


def grid(doc: dict) -> int:
    target = doc["target"]
    return min(target["num_sms"], target.get("max_resident", target["num_sms"]))


def loader_sms(tasks: list[dict], order: list[int], g: int) -> list[int]:
    """The SM of each task position, as the loader assigns it over a grid of ``g`` SMs."""
    given = [t.get("sm") for t in tasks]
    assigned = [sm for sm in given if sm is not None]
    if assigned and all(type(sm) is int and 0 <= sm < g for sm in assigned):
        return [0 if sm is None else sm for sm in given]
    heap = [(0, 0, 0, s) for s in range(g)]
    sms = [0] * len(tasks)
    for i in order:
        load_bytes, load_flops, count, s = heapq.heappop(heap)
        sms[i] = s
        t = tasks[i]
        heapq.heappush(heap, (load_bytes + _cost(t.get("est_bytes")), load_flops + _cost(t.get("est_flops")),
                              count + 1, s))
    return sms


def _cost(value) -> int:
    return value if type(value) is int else 0


def placed(doc: dict, order: list[int]) -> dict:
    """The schedule as the loader runs it: tasks in ``order`` with their loader SMs."""
    tasks = doc["tasks"]
    sms = loader_sms(tasks, order, grid(doc))
    out = _shell(doc)
    out["tasks"] = [{**tasks[i], "sm": sms[i]} for i in order]
    return out


def unplaced(doc: dict, order: list[int]) -> dict:
    """Every task on an SM of its own (a target with as many SMs as tasks)."""
    tasks = doc["tasks"]
    out = _shell(doc)
    n = max(len(tasks), 1)
    out["target"] = {**doc["target"], "num_sms": n, "max_resident": n}
    out["tasks"] = [{**tasks[i], "sm": k} for k, i in enumerate(order)]
    return out


def _shell(doc: dict) -> dict:
    return {k: v for k, v in doc.items() if k != "queues"}
