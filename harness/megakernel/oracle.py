"""Ground truth for schedules, by execution: explore the interleavings, watch identities.

Written apart from the validator on purpose (it shares only constants). It runs the schedule
on an abstract machine: every SM walks its queue; a task may start when its SM predecessor has
completed and each wait holds, counted over *which* producers completed (a bitset, so identity
is never lost). A state is the set of completed tasks; every reachable state is visited
(``exhaustive``) or, past ``max_states``, random interleavings are run (``sampled``). At each state
it checks the tasks that could start now:

- deadlock: nothing can start and not every task completed;
- read_incomplete: a task would read a buffer before seeing every write of it this step
  (on-chip memory is per SM: writes made on another SM are never seen);
- read_unwritten / output_unwritten: a read, or the host's read of an output, of a buffer
  nothing writes this step (a KV cache nothing appends to this step holds earlier steps' state:
  reading it is safe);
- concurrent_conflict: two tasks that could run at once touch the same physical memory, one
  writing (same buffer with overlapping boxes, or two buffers on one page);
- alias_live: a task would touch a paged buffer while another buffer of its page is live
  (some accessor started, some not finished).

Documents the launch contract forbids (dangling references, caps, SMs out of range or not
co-resident, non-zero counters, writes to read-only buffers; in AMK's dialect, ops that break
``amk_ops``' rules, and dependency cycles its loader refuses) are unsafe by definition
(``structural``). A schedule AMK's loader places is run as placed (``placement.py``, shared with
the validator: it says where tasks run, not whether that is safe).
"""

from __future__ import annotations

import random

from harness.megakernel import amk_ops, placement
from harness.megakernel import format as fmt
from harness.megakernel.placement import needs_placement

_KEEP = 10


def label(doc, max_states: int = 20000, runs: int = 64, seed: int = 0, any_placement: bool = True) -> dict:
    """{safe, mode, states, runs, violations, kinds} for one document. A document AMK's loader
    places is run as the loader places it; with ``any_placement``, ``safe_any`` also says whether
    it is safe with every task on an SM of its own (see ``placement.py``)."""
    if needs_placement(doc):
        return _label_placed(doc, max_states, runs, seed, any_placement)
    problem = ill_formed(doc)
    if problem:
        return _result(False, "structural", [{"kind": "malformed", "detail": problem}])
    machine = Machine(doc)
    found = machine.static()
    explored = machine.explore(max_states)
    if explored is not None:
        return _result(not (found + explored), "exhaustive", found + explored, states=machine.states)
    sampled = machine.sample(runs, seed)
    return _result(not (found + sampled), "sampled", found + sampled, states=machine.states, runs=runs)


def _label_placed(doc, max_states, runs, seed, any_placement) -> dict:
    """The loader reads an unassigned SM as no SM yet: the contract is checked with SM 0 there."""
    probe = {k: v for k, v in doc.items() if k != "queues"}
    probe["tasks"] = [{**t, "sm": 0} if isinstance(t, dict) and t.get("sm", 0) is None else t
                      for t in doc["tasks"]]
    problem = ill_formed(probe)
    if problem:
        return _result(False, "structural", [{"kind": "malformed", "detail": problem}])
    order, _ = placement.topological_order(doc["tasks"])
    if order is None:
        return _result(False, "structural", [{"kind": "loader_refuses", "detail": "dependency cycle"}])
    result = label(placement.placed(doc, order), max_states, runs, seed)
    if any_placement:
        anywhere = label(placement.unplaced(doc, order), max_states, runs, seed)
        result["safe_any"] = anywhere["safe"] and not _onchip_touched_twice(doc)
        result["mode_any"] = anywhere["mode"]
    return result


def _onchip_touched_twice(doc) -> bool:
    """Two tasks touching one piece of on-chip memory (a buffer, or a page of buffers): some
    placement puts them on different SMs or interleaves them on one, so not every placement is safe."""
    onchip = {b["id"] for b in doc["buffers"] if b.get("space", "HBM") in fmt.ON_CHIP_SPACES}
    page = {int(k): v for k, v in ((doc.get("pages") or {}).get("buffer_to_page") or {}).items()}
    touched: dict = {}
    for task in doc["tasks"]:
        for bid in set(task["inputs"]) | set(task["outputs"]):
            if bid in onchip:
                touched.setdefault(("page", page[bid]) if bid in page else ("buffer", bid), set()).add(task["id"])
    return any(len(ids) > 1 for ids in touched.values())


def replay(doc, trace: list[int]) -> list[dict]:
    """Violations seen along one given interleaving (task ids in completion order)."""
    if ill_formed(doc):
        return [{"kind": "malformed"}]
    machine = Machine(doc)
    return machine.static() + machine.follow(trace)


def _result(safe: bool, mode: str, violations: list[dict], states: int = 0, runs: int = 0) -> dict:
    kinds = sorted({v["kind"] for v in violations})
    return {"safe": safe, "mode": mode, "states": states, "runs": runs,
            "violations": violations[:_KEEP], "kinds": kinds}


# --------------------------------------------------------------------------- launch contract

def ill_formed(doc) -> str | None:
    """The first way ``doc`` breaks the format or the launch contract, or None."""
    if not isinstance(doc, dict):
        return "not an object"
    version = doc.get("format")
    if not (isinstance(version, str) and version.split("/")[0] == fmt.FORMAT_NAME
            and version.partition("/")[2].split(".")[0] == str(fmt.FORMAT_MAJOR)):
        return "unknown format"
    target = doc.get("target")
    if not isinstance(target, dict):
        return "no target"
    sms = target.get("num_sms")
    resident = target.get("max_resident", sms)
    if not (_pos_int(sms) and _pos_int(resident)):
        return "bad target"
    if not all(isinstance(doc.get(key), list) for key in ("buffers", "counters", "tasks")):
        return "buffers, counters, tasks must be lists"
    buffers = _buffer_table(doc["buffers"])
    if isinstance(buffers, str):
        return buffers
    counters = _counter_set(doc["counters"])
    if isinstance(counters, str):
        return counters
    problem = _page_problem(doc.get("pages"), buffers) or _task_problem(doc["tasks"], buffers, counters, sms, resident)
    if problem is None and doc.get("ops") == "amk":
        problem = next(filter(None, (_op_problem(t, buffers) for t in doc["tasks"])), None)
    return problem


def _op_problem(task, buffers) -> str | None:
    """AMK's per-opcode rules (amk_ops.py), checked here with the oracle's own code."""
    spec = amk_ops.OPS.get(task["op"])
    if spec is None:
        return f"task {task['id']}: unknown op"
    ins, outs, params = task["inputs"], task["outputs"], task.get("params", {})
    cap = fmt.MAX_INPUTS if spec[1] < 0 else spec[1]
    if not (spec[0] <= len(ins) <= cap and len(outs) == spec[2]):
        return f"task {task['id']}: operand count"
    if not all(key in params for key in spec[3]):
        return f"task {task['id']}: missing parameter"
    for key, value in params.items():
        kind = amk_ops.PARAM_TYPES.get(key)
        if kind == "i" and not (_is_int(value) and amk_ops.INT32_MIN <= value <= amk_ops.INT32_MAX):
            return f"task {task['id']}: parameter {key} not an int32"
        if kind == "f" and not (isinstance(value, (int, float)) and not isinstance(value, bool)):
            return f"task {task['id']}: parameter {key} not a number"
    return _operand_kind_problem(task, ins, outs, buffers)


def _operand_kind_problem(task, ins, outs, buffers) -> str | None:
    need = {"int": lambda b: b["dtype"] in amk_ops.INTEGER_DTYPES,
            "weight": lambda b: b["kind"] in amk_ops.WEIGHT_KINDS,
            "kv": lambda b: b["kind"] == "KV_CACHE"}
    for side, position, what in amk_ops.OPERAND_RULES.get(task["op"], ()):
        operands = ins if side == "in" else outs
        if position < len(operands) and not need[what](buffers[operands[position]]):
            return f"task {task['id']}: operand {side}[{position}] is not {what}"
    if task["op"] not in amk_ops.KV_WRITERS and any(buffers[b]["kind"] == "KV_CACHE" for b in outs):
        return f"task {task['id']}: writes a KV cache without appending"
    return None


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _pos_int(x) -> bool:
    return _is_int(x) and x >= 1


def _buffer_table(items):
    table = {}
    for buf in items:
        if not isinstance(buf, dict) or not _is_int(buf.get("id")) or buf["id"] in table:
            return "bad buffer id"
        shape = buf.get("shape")
        if not (isinstance(shape, list) and 1 <= len(shape) <= fmt.MAX_RANK and all(_pos_int(d) for d in shape)):
            return f"buffer {buf['id']}: bad shape"
        if (buf.get("kind") not in fmt.KINDS or buf.get("dtype") not in fmt.DTYPES
                or buf.get("space", "HBM") not in fmt.SPACES):
            return f"buffer {buf['id']}: bad kind/dtype/space"
        table[buf["id"]] = buf
    return table


def _counter_set(items):
    ids = set()
    for counter in items:
        if not isinstance(counter, dict) or not _is_int(counter.get("id")) or counter["id"] in ids:
            return "bad counter id"
        init = counter.get("init", 0)
        if not _is_int(init) or init != 0:
            return f"counter {counter['id']}: init is not 0"
        ids.add(counter["id"])
    return ids


def _page_problem(pages, buffers) -> str | None:
    if pages is None:
        return None
    if not (isinstance(pages, dict) and isinstance(pages.get("buffer_to_page"), dict)
            and isinstance(pages.get("pages"), list)):
        return "bad pages"
    spaces = {}
    for page in pages["pages"]:
        if not isinstance(page, dict) or not _is_int(page.get("id")) or page["id"] in spaces:
            return "bad page id"
        if page.get("space") not in fmt.SPACES:
            return "bad page space"
        spaces[page["id"]] = page["space"]
    for key, pid in pages["buffer_to_page"].items():
        try:
            bid = int(key)
        except (TypeError, ValueError):
            return "bad page binding"
        if bid not in buffers or not _is_int(pid) or pid not in spaces:
            return "page binding to nothing"
        buf = buffers[bid]
        if buf["kind"] != "ACTIVATION":
            return "non-activation buffer on a page"
        if (buf.get("space", "HBM") in fmt.ON_CHIP_SPACES) != (spaces[pid] in fmt.ON_CHIP_SPACES):
            return "buffer and page spaces differ"
    return None


def _task_problem(items, buffers, counters, sms, resident) -> str | None:
    ids, used = set(), set()
    for task in items:
        if not isinstance(task, dict) or not _is_int(task.get("id")) or task["id"] in ids:
            return "bad task id"
        ids.add(task["id"])
        problem = _one_task_problem(task, buffers, counters, sms)
        if problem:
            return f"task {task['id']}: {problem}"
        used.add(task["sm"])
    return "more SM programs than can be co-resident" if len(used) > resident else None


def _one_task_problem(task, buffers, counters, sms) -> str | None:
    ins, outs, waits = task.get("inputs"), task.get("outputs"), task.get("waits", [])
    if not (isinstance(ins, list) and isinstance(outs, list) and isinstance(waits, list)):
        return "inputs/outputs/waits not lists"
    if len(ins) > fmt.MAX_INPUTS or len(outs) > fmt.MAX_OUTPUTS or len(waits) > fmt.MAX_WAITS:
        return "over the ABI caps"
    if not all(_is_int(b) and b in buffers for b in ins + outs):
        return "unknown buffer"
    if any(buffers[b]["kind"] in fmt.READ_ONLY_KINDS for b in outs):
        return "writes a read-only buffer"
    if not (_is_int(task.get("out_counter")) and task["out_counter"] in counters):
        return "unknown out_counter"
    for wait in waits:
        if not (isinstance(wait, dict) and _pos_int(wait.get("threshold"))
                and _is_int(wait.get("counter")) and wait["counter"] in counters):
            return "bad wait"
    sm = task.get("sm")
    if not (_is_int(sm) and 0 <= sm < sms):
        return "SM missing or out of range"
    if not isinstance(task.get("params", {}), dict) or not isinstance(task.get("op"), str):
        return "bad op/params"
    return _region_problem(task.get("regions"), outs, buffers)


def _region_problem(regions, outs, buffers) -> str | None:
    if regions is None:
        return None
    if not isinstance(regions, list):
        return "regions not a list"
    for region in regions:
        if not isinstance(region, dict) or region.get("buffer") not in outs or not _is_int(region.get("buffer")):
            return "region of a buffer it does not write"
        shape, box = buffers[region["buffer"]]["shape"], region.get("box")
        if not (isinstance(box, list) and len(box) == len(shape)):
            return "region rank"
        for pair, dim in zip(box, shape):
            if not (isinstance(pair, list) and len(pair) == 2 and all(_is_int(v) for v in pair)
                    and 0 <= pair[0] < pair[1] <= dim):
                return "region outside the buffer"
    return None


# --------------------------------------------------------------------------- the machine

class Machine:
    """The abstract device. State = bitset of completed tasks (bit i = tasks[i])."""

    def __init__(self, doc: dict):
        tasks = doc["tasks"]
        self.ids = [t["id"] for t in tasks]
        self.n = len(tasks)
        self.all = (1 << self.n) - 1
        self.sm = [t["sm"] for t in tasks]
        self.queues: dict[int, list[int]] = {}
        for i, sm in enumerate(self.sm):
            self.queues.setdefault(sm, []).append(i)
        self.sm_mask = {sm: sum(1 << i for i in q) for sm, q in self.queues.items()}
        self.buffers = {b["id"]: b for b in doc["buffers"]}
        pages = doc.get("pages") or {}
        self.page = {int(k): v for k, v in (pages.get("buffer_to_page") or {}).items()}
        produced = {}
        for i, t in enumerate(tasks):
            produced[t["out_counter"]] = produced.get(t["out_counter"], 0) | (1 << i)
        self.waits = [[(produced.get(w["counter"], 0), w["threshold"]) for w in t.get("waits", [])]
                      for t in tasks]
        self._accesses(tasks)
        self.states = 0

    def _onchip(self, bid) -> bool:
        return self.buffers[bid].get("space", "HBM") in fmt.ON_CHIP_SPACES

    def _accesses(self, tasks) -> None:
        writes: dict[int, int] = {}
        touch: dict[int, list] = {}
        for i, t in enumerate(tasks):
            boxes = {r["buffer"]: r["box"] for r in t.get("regions") or []}
            for bid in t["outputs"]:
                writes[bid] = writes.get(bid, 0) | (1 << i)
                touch.setdefault(bid, []).append((i, True, boxes.get(bid)))
            for bid in t["inputs"]:
                touch.setdefault(bid, []).append((i, False, None))
        self.writes = writes
        self.reads = [self._read_rules(i, t) for i, t in enumerate(tasks)]
        self.conflict = self._conflicts(touch)
        self.alias = self._alias_rules(tasks, touch)

    def _read_rules(self, i: int, task: dict) -> list[tuple]:
        rules = []
        for bid in task["inputs"]:
            kind = self.buffers[bid]["kind"]
            if kind in fmt.READ_ONLY_KINDS:
                continue
            every = self.writes.get(bid, 0)
            if kind == "KV_CACHE" and every == 0:
                continue  # no append this step: the cache holds the earlier steps' state
            others = every & ~(1 << i)
            unwritten = False if kind == "KV_CACHE" else (others == 0)
            rules.append((bid, others, self._onchip(bid), unwritten))
        return rules

    def _location(self, bid, i):
        place = ("page", self.page[bid]) if bid in self.page else ("buffer", bid)
        return place, (self.sm[i] if self._onchip(bid) else None)

    def _conflicts(self, touch) -> list[int]:
        by_place: dict = {}
        for bid, uses in touch.items():
            for i, writes, box in uses:
                by_place.setdefault(self._location(bid, i), []).append((i, writes, bid, box))
        conflict = [0] * self.n
        for uses in by_place.values():
            for x, (i, wi, bi, boxi) in enumerate(uses):
                for j, wj, bj, boxj in uses[x + 1:]:
                    if i != j and (wi or wj) and (bi != bj or self._overlap(bi, boxi, boxj)):
                        conflict[i] |= 1 << j
                        conflict[j] |= 1 << i
        return conflict

    def _overlap(self, bid, a, b) -> bool:
        shape = self.buffers[bid]["shape"]
        a, b = a or [[0, d] for d in shape], b or [[0, d] for d in shape]
        return all(x[0] < y[1] and y[0] < x[1] for x, y in zip(a, b))

    def _alias_rules(self, tasks, touch) -> list[list[int]]:
        members: dict[int, list[int]] = {}
        for bid, page in self.page.items():
            members.setdefault(page, []).append(bid)
        users = {bid: [i for i, _, _ in uses] for bid, uses in touch.items()}
        rules = []
        for i, t in enumerate(tasks):
            masks = set()
            for bid in set(t["inputs"] + t["outputs"]):
                for other in members.get(self.page.get(bid), []) if bid in self.page else []:
                    if other != bid:
                        masks.add(self._users_mask(users.get(other, []), other, i))
            rules.append(sorted(m for m in masks if m))
        return rules

    def _users_mask(self, users, bid, i) -> int:
        same_sm = self._onchip(bid)
        return sum(1 << j for j in set(users) if not same_sm or self.sm[j] == self.sm[i])

    # ----------------------------------------------------------------- stepping

    def enabled(self, done: int) -> list[int]:
        ready = []
        for sm, queue in self.queues.items():
            position = (done & self.sm_mask[sm]).bit_count()
            if position < len(queue):
                i = queue[position]
                if all((done & mask).bit_count() >= k for mask, k in self.waits[i]):
                    ready.append(i)
        return ready

    def check(self, done: int, ready: list[int]) -> list[dict]:
        found = []
        if not ready and done != self.all:
            stuck = [self.ids[i] for i in range(self.n) if not (done >> i) & 1]
            found.append({"kind": "deadlock", "tasks": stuck[:8], "completed": self._ids(done)})
        ready_mask = sum(1 << i for i in ready)
        for i in ready:
            found.extend(self._check_task(done, i, ready_mask))
        return found

    def _check_task(self, done: int, i: int, ready_mask: int) -> list[dict]:
        found = []
        for bid, others, onchip, unwritten in self.reads[i]:
            if unwritten:
                found.append({"kind": "read_unwritten", "tasks": [self.ids[i]], "buffer": bid})
                continue
            seen = done & self.sm_mask[self.sm[i]] if onchip else done
            missing = others & ~seen
            if missing:
                found.append({"kind": "read_incomplete", "tasks": [self.ids[i]], "buffer": bid,
                              "seen": self._ids(others & seen), "missing": self._ids(missing)})
        clash = self.conflict[i] & ready_mask
        if clash:
            found.append({"kind": "concurrent_conflict", "tasks": [self.ids[i]] + self._ids(clash)})
        started = done | (1 << i)
        for mask in self.alias[i]:
            if mask & started and mask & ~done:
                found.append({"kind": "alias_live", "tasks": [self.ids[i]], "live": self._ids(mask)})
        return found

    def _ids(self, mask: int) -> list[int]:
        return [self.ids[i] for i in range(self.n) if (mask >> i) & 1]

    def static(self) -> list[dict]:
        return [{"kind": "output_unwritten", "buffer": bid} for bid, b in self.buffers.items()
                if b["kind"] == "IO_OUTPUT" and not self.writes.get(bid)]

    # ----------------------------------------------------------------- search

    def explore(self, max_states: int) -> list[dict] | None:
        """Every reachable state, depth first; None when there are more than ``max_states``."""
        parent = {0: None}
        stack, found, keys = [0], [], set()
        while stack:
            done = stack.pop()
            ready = self.enabled(done)
            for v in self.check(done, ready):
                self._keep(v, done, parent, found, keys)
            for i in ready:
                nxt = done | (1 << i)
                if nxt not in parent:
                    if len(parent) >= max_states:
                        self.states = len(parent)
                        return None
                    parent[nxt] = (done, i)
                    stack.append(nxt)
        self.states = len(parent)
        return found

    def _keep(self, v, done, parent, found, keys) -> None:
        key = (v["kind"], tuple(v.get("tasks", ())), v.get("buffer"))
        if key in keys or len(found) >= _KEEP:
            return
        keys.add(key)
        v["trace"] = self._trace(done, parent)
        found.append(v)

    def _trace(self, done, parent) -> list[int]:
        steps = []
        while parent.get(done):
            done, i = parent[done]
            steps.append(self.ids[i])
        return steps[::-1]

    def sample(self, runs: int, seed: int) -> list[dict]:
        """Random interleavings: half uniform, half with random SM priorities (PCT-like)."""
        rng = random.Random(seed)
        found, keys, checked = [], set(), set()
        for run in range(runs):
            priority = {sm: rng.random() for sm in self.queues}
            done, trace = 0, []
            while True:
                ready = self.enabled(done)
                if done not in checked:
                    checked.add(done)
                    for v in self.check(done, ready):
                        self._keep_trace(v, trace, found, keys)
                if not ready:
                    break
                i = rng.choice(ready) if run % 2 == 0 else max(ready, key=lambda t: priority[self.sm[t]])
                if run % 2 and rng.random() < 0.1:
                    priority[self.sm[i]] = rng.random()
                done |= 1 << i
                trace.append(self.ids[i])
        self.states = len(checked)
        return found

    def _keep_trace(self, v, trace, found, keys) -> None:
        key = (v["kind"], tuple(v.get("tasks", ())), v.get("buffer"))
        if key not in keys and len(found) < _KEEP:
            keys.add(key)
            v["trace"] = list(trace)
            found.append(v)

    def follow(self, trace: list[int]) -> list[dict]:
        index = {tid: i for i, tid in enumerate(self.ids)}
        done, found = 0, []
        for step, tid in enumerate(trace + [None]):
            ready = self.enabled(done)
            found.extend(self.check(done, ready))
            if tid is None:
                break
            i = index.get(tid)
            if i is None or i not in ready:
                found.append({"kind": "illegal_trace", "step": step, "task": tid})
                break
            done |= 1 << i
        return found
