"""Verdicts on schedules AMK's loader places (``"sm": null`` tasks, or AMK's queue order).

Steps: the document as written must keep the launch contract (an unassigned SM counts as SM 0
for that check) and, in AMK's dialect, the per-opcode rules; the dependency graph must have a
topological order (the loader refuses a cycle: ``dependency_cycle``). Then it is judged with
every task on an SM of its own (``placement.unplaced``): safe there means safe under every
placement whose queues follow a topological order, AMK's loader's included. Otherwise it is
judged as the loader places it (``placement.placed``), and the verdict says which holds.
"""

from __future__ import annotations

from harness.megakernel import placement
from harness.megakernel.structure import compile_document, violation

SAFE_ANY = "safe_any_placement"
SAFE_LOADER = "safe_amk_loader"
UNSAFE = "unsafe"


def check(doc: dict, validate_placed, verdict_type):
    """The verdict on ``doc`` (``needs_placement(doc)`` holds); ``validate_placed`` judges a
    placed document, ``verdict_type`` builds a verdict."""
    probe = _probe(doc)
    c, found = compile_document(probe)
    if c is None:
        return verdict_type(False, found, {"phase": "structure"}, safety=UNSAFE)
    if doc.get("ops") == "amk":
        from harness.megakernel.opcheck import op_findings

        found = op_findings(doc)
        if found:
            return verdict_type(False, found, {"phase": "ops"}, safety=UNSAFE)
    tasks = doc["tasks"]
    order, succ = placement.topological_order(tasks)
    if order is None:
        cycle = placement.find_cycle(tasks, succ, 0)
        steps = " -> ".join(str(t) for t in cycle + cycle[:1])
        found = [violation("dependency_cycle", "deadlock", f"the dependency graph has a cycle ({steps}), "
                           "so there is no topological order and AMK's loader refuses the program",
                           cycle=cycle)]
        return verdict_type(False, found, {"phase": "placement", "tasks": len(tasks)}, safety=UNSAFE)
    anywhere = validate_placed(placement.unplaced(doc, order))
    if anywhere.ok:
        anywhere.stats["placement"] = "any"
        anywhere.stats["sms"] = placement.grid(doc)
        anywhere.safety = SAFE_ANY
        return anywhere
    loaded_doc = placement.placed(doc, order)
    loaded = validate_placed(loaded_doc)
    loaded.stats["placement"] = "amk_loader"
    loaded.stats["any_placement_classes"] = anywhere.classes
    loaded.safety = SAFE_LOADER if loaded.ok else UNSAFE
    loaded.placed = loaded_doc
    return loaded


def _probe(doc: dict) -> dict:
    """The document as written, unassigned SMs read as SM 0, for the launch-contract checks."""
    tasks = [{**t, "sm": 0} if type(t) is dict and t.get("sm", 0) is None else t for t in doc["tasks"]]
    probe = {k: v for k, v in doc.items() if k != "queues"}
    probe["tasks"] = tasks
    return probe
