"""Verdicts on schedules AMK's loader places (``"sm": null`` tasks, or AMK's queue order).

Steps: the document as written must keep the launch contract (an unassigned SM counts as SM 0
for that check) and, in AMK's dialect, the per-opcode rules; the dependency graph must have a
topological order (the loader refuses a cycle: ``dependency_cycle``). Then it is judged with
every task on an SM of its own (``placement.unplaced``): safe there means safe under every
placement whose queues follow a topological order, AMK's loader's included, unless two tasks
share on-chip memory (then where they run decides what they see). Otherwise it is judged as the
loader places it (``placement.placed``), and the verdict says which holds.
"""

from __future__ import annotations

from harness.megakernel import fastpath, placement
from harness.megakernel.structure import compile_document, compile_unplaced, violation

SAFE_ANY = "safe_any_placement"
SAFE_LOADER = "safe_amk_loader"
UNSAFE = "unsafe"


def check(doc: dict, validate_placed, verdict_type, semantic):
    """The verdict on ``doc`` (``needs_placement(doc)`` holds); ``validate_placed`` judges a
    placed document, ``semantic`` a compiled one, ``verdict_type`` builds a verdict."""
    judged = fastpath.judge(doc)  # the common cases, natively; None: not sure, judged below
    if judged:
        return accepted(judged, verdict_type)
    if judged is False:  # unsafe for certain; what to name is worked out below when it is read
        return verdict_type.proven_unsafe(lambda: explain(doc, validate_placed, verdict_type, semantic))
    return explain(doc, validate_placed, verdict_type, semantic)


def accepted(judged: tuple, verdict_type):
    """The verdict for ``fastpath.judge``'s acceptance, (tasks, counters, grid)."""
    stats = {"tasks": judged[0], "sms": judged[2], "counters": judged[1], "phase": "races",
             "partial_waits": False, "placement": "any"}  # (the keys in the order explain() gives)
    return verdict_type(True, [], stats, safety=SAFE_ANY)


def explain(doc: dict, validate_placed, verdict_type, semantic):
    """``check`` in Python alone: the verdict with everything it names."""
    c = compile_unplaced(doc)  # the common case: read once, straight into the unplaced view
    if c is None:
        probe_c, found = compile_document(_probe(doc))
        if probe_c is None:
            return verdict_type(False, found, {"phase": "structure"}, safety=UNSAFE)
    if doc.get("ops") == "amk":
        from harness.megakernel.opcheck import op_findings

        found = op_findings(doc)
        if found:
            return verdict_type(False, found, {"phase": "ops"}, safety=UNSAFE)
    tasks = doc["tasks"]
    order = None
    if c is None or not _listed_in_order(c):
        order, succ = placement.topological_order(tasks)
        if order is None:
            return _cycle(tasks, succ, verdict_type)
    if c is not None:
        anywhere = semantic(c)
    else:
        anywhere = validate_placed(placement.unplaced(doc, order))
    shared = anywhere.ok and _onchip_shared(c if c is not None else compile_document(_probe(doc))[0])
    if anywhere.ok and not shared:
        anywhere.stats["placement"] = "any"
        anywhere.stats["sms"] = placement.grid(doc)
        anywhere.safety = SAFE_ANY
        return anywhere
    if not anywhere.ok and c is not None and len(tasks) <= placement.grid(doc) and all(t["sm"] is None for t in tasks):
        # The loader then puts every task on an SM of its own (each next task finds an idle SM
        # with nothing loaded yet), which is the view just judged: the same verdict.
        anywhere.stats["placement"] = "amk_loader"
        anywhere.stats["any_placement_classes"] = anywhere.classes
        anywhere.safety = UNSAFE
        return anywhere
    if order is None:
        order, _ = placement.topological_order(tasks)
    loaded_doc = placement.placed(doc, order)
    loaded = validate_placed(loaded_doc)
    loaded.stats["placement"] = "amk_loader"
    loaded.stats["any_placement_classes"] = ["onchip_placement"] if shared else anywhere.classes
    loaded.safety = SAFE_LOADER if loaded.ok else UNSAFE
    loaded.placed = loaded_doc
    return loaded


def placed_document(doc: dict) -> dict | None:
    """``doc`` as AMK's loader places it (None when it cannot: a cycle), for witnesses."""
    order, _ = placement.topological_order(doc["tasks"])
    return None if order is None else placement.placed(doc, order)


def _onchip_shared(c) -> bool:
    """On-chip memory (SMEM, registers) that two tasks touch, directly or through a shared page:
    whether they see each other's data, or clobber it, depends on where they run, so such a
    schedule is safe under some placements at most (with a grid of two SMs or more)."""
    if not any(c.buf_onchip):
        return False
    users: dict[int, set[int]] = {}
    for i, (ins, outs) in enumerate(zip(c.inputs, c.outputs)):
        for b in (*ins, *outs):
            if c.buf_onchip[b]:
                users.setdefault(c.page_of.get(b, ("buffer", b)), set()).add(i)
    return any(len(tasks) > 1 for tasks in users.values())


def _listed_in_order(c) -> bool:
    """Every producer of every counter a task waits on is listed before it: then the list is a
    topological order of the dependency graph, so the graph has no cycle."""
    last = [-1] * len(c.counter_ids)
    i = -1
    for counter in c.out:
        i += 1
        last[counter] = i
    i = -1
    for waits in c.waits:
        i += 1
        for counter, _ in waits:
            if last[counter] >= i:
                return False
    return True


def _cycle(tasks, succ, verdict_type):
    cycle = placement.find_cycle(tasks, succ)
    steps = " -> ".join(str(t) for t in cycle + cycle[:1])
    found = [violation("dependency_cycle", "deadlock", f"the dependency graph has a cycle ({steps}), "
                       "so there is no topological order and AMK's loader refuses the program", cycle=cycle)]
    return verdict_type(False, found, {"phase": "placement", "tasks": len(tasks)}, safety=UNSAFE)


def _probe(doc: dict) -> dict:
    """The document as written, unassigned SMs read as SM 0, for the launch-contract checks."""
    tasks = [{**t, "sm": 0} if type(t) is dict and t.get("sm", 0) is None else t for t in doc["tasks"]]
    probe = {k: v for k, v in doc.items() if k != "queues"}
    probe["tasks"] = tasks
    return probe
