"""One problem's evolution: decompose, search every unit, split the failures, merge where fusion
pays, over several iterations; then compose the verified kernels and check the whole model.

Merge policy. Fusing two adjacent verified units saves writing their intermediate to memory and
reading it back. Where speed is measured (CUDA), a merge is tried when that round trip, at the
device's measured bandwidth, is at least ``MERGE_TIME_SHARE`` of the two parts' measured time, and
kept only if the merged kernel is correct and measured faster than the parts together. Where speed
is not measured (Triton in the CPU interpreter), a merge is tried when the intermediate is at least
``merge_share`` of the bytes the two parts must move anyway, and kept when it is correct; the
provenance says the heuristic decided.

Slower than PyTorch. Where speed is measured, a unit whose best verified kernel is slower than the
unit's own PyTorch (speedup below 1 on its sub-problem) goes back to PyTorch: on the H200 a builtin
Linear kernel at 0.27x of cuBLAS had pulled L2/33, L2/28 and L3/1 down to 0.27-0.30x end to end.
If every kernel is slower, the one that costs the least time over PyTorch stays, so that the
composition is still a custom kernel (judged, with its honest speedup) rather than PyTorch alone.
"""

from __future__ import annotations

import itertools
from typing import Any

from harness.llm.base import BudgetExceeded, LLMError
from harness.llm.prompts import device_peaks
from submitters.mkevolve.search import UnitSearch
from submitters.mkevolve.units import FAILED, KERNEL, MERGED, PENDING, PYTORCH, SPLIT, Undecomposable, Unit

STAGES = ("decompose", "search", "merge", "compose")
MERGE_TIME_SHARE = 0.1


class Evolution:
    """The decomposition and its kernels, evolving together for ``iterations`` rounds."""

    def __init__(self, decomposition: Any, workspace: Any, search: UnitSearch, iterations: int, merge_share: float,
                 facts: dict, log_event):
        self.decomposition, self.workspace, self.search = decomposition, workspace, search
        self.iterations, self.merge_share = iterations, merge_share
        self.bandwidth = device_peaks(facts or {}).get("bytes_per_s")
        self.event = log_event
        self.units: list[Unit] = list(decomposition.units)
        self.replaced: list[Unit] = []
        self.merges: list[dict] = []
        self._tried: set[tuple] = set()
        self._names = (f"s{n}" for n in itertools.count(len(self.units)))
        self.stopped: str | None = None

    def run(self) -> None:
        try:
            for iteration in range(self.iterations):
                last = iteration == self.iterations - 1
                self._search_pending()
                self._settle_failures(last)
                merged = self._merge_adjacent()
                if not merged and not any(u.status == PENDING for u in self.units):
                    break
        except BudgetExceeded as stop:
            self.stopped = stop.reason
        except LLMError as error:
            self.stopped = f"llm error: {error}"
        self._finish()

    # -- search -------------------------------------------------------------------------------------

    def _search_pending(self) -> None:
        pending = [u for u in self.units if u.status == PENDING]
        self.workspace.prepare(pending)
        for unit in pending:
            try:
                subproblem, prompt = self.workspace.subproblem(unit)
            except Undecomposable as why:
                unit.status, unit.note = PYTORCH, f"kept in PyTorch: {why}"
                continue
            found = self.search.search(unit, subproblem, prompt, "search")
            unit.status = KERNEL if found else FAILED
            unit.note = _verdict_note(unit)
            self.event("search", unit=unit.name, status=unit.status, note=unit.note, proposals=unit.proposals)

    def _settle_failures(self, last: bool) -> None:
        for unit in [u for u in self.units if u.status == FAILED]:
            halves = None if last else self.decomposition.split(unit, self._names)
            if halves is None:
                unit.status = PYTORCH
                unit.note = f"kept in PyTorch: {unit.note}"
                continue
            unit.status = SPLIT
            self.replaced.append(unit)
            index = self.units.index(unit)
            self.units[index:index + 1] = list(halves)
            self.event("split", unit=unit.name, into=[h.name for h in halves], why=unit.note)

    # -- merge --------------------------------------------------------------------------------------

    def _merge_adjacent(self) -> bool:
        changed, index = False, 0
        while index < len(self.units) - 1:
            first, second = self.units[index], self.units[index + 1]
            decision = self._merge_decision(first, second)
            if decision is None or not decision["tried"]:
                index += 1
                continue
            merged = self.decomposition.merge(first, second, self._names)
            try:
                if merged is None:
                    raise Undecomposable("this decomposition does not merge units")
                subproblem, prompt = self.workspace.subproblem(merged)
            except Undecomposable as why:
                decision.update(unit=merged.name if merged else None, kept=False, outcome=str(why))
                index += 1
                continue
            try:
                found = self.search.search(merged, subproblem, prompt, "merge")
            finally:
                decision["tokens"] = merged.usage.total_tokens
            keep, why = self._keep(found, first, second)
            decision.update(unit=merged.name, kept=keep, outcome=why)
            self.event("merge", **decision)
            if not keep:
                index += 1
                continue
            merged.status, merged.note = KERNEL, why
            first.status = second.status = MERGED
            self.replaced += [first, second]
            self.units[index:index + 2] = [merged]
            changed = True
        return changed

    def _merge_decision(self, first: Unit, second: Unit) -> dict | None:
        key = (first.span, second.span)
        if first.status != KERNEL or second.status != KERNEL or key in self._tried or first.stop != second.start:
            return None
        self._tried.add(key)
        handed = self.decomposition.boundary_bytes(first, second)
        decision = {"units": [first.name, second.name], "intermediate_bytes": handed}
        if self._timed(first, second):
            round_trip = 2 * handed / self.bandwidth * 1e3
            parts = first.best.ms + second.best.ms
            decision.update(tried=round_trip >= MERGE_TIME_SHARE * parts, policy=(
                f"measured: the intermediate's round trip ({round_trip:.4g} ms at {self.bandwidth / 1e9:.0f} GB/s) "
                f"against the parts' {parts:.4g} ms (tried at >= {MERGE_TIME_SHARE:.0%})"))
        else:
            traffic = max(1, self.decomposition.traffic_bytes(first) + self.decomposition.traffic_bytes(second))
            decision.update(tried=handed >= self.merge_share * traffic, policy=(
                f"heuristic (speed not measured): the intermediate is {handed / traffic:.0%} of the bytes the parts "
                f"move (tried at >= {self.merge_share:.0%})"))
        self.merges.append(decision)
        return decision

    def _timed(self, *units: Unit) -> bool:
        return bool(self.bandwidth) and self.search.measured and all(u.best and u.best.ms for u in units)

    def _keep(self, found: Any, first: Unit, second: Unit) -> tuple[bool, str]:
        if found is None:
            return False, "no accepted kernel for the merged unit"
        if self._timed(first, second) and found.ms is not None:
            parts = first.best.ms + second.best.ms
            return found.ms < parts, f"merged kernel {found.ms:.4g} ms against the parts' {parts:.4g} ms"
        return True, "merged kernel correct; speed not measured, so the byte heuristic decided"

    # -- the outcome --------------------------------------------------------------------------------

    def _finish(self) -> None:
        for unit in self.units:
            if unit.status == PENDING and unit.best is not None and unit.best.accepted:  # found as a budget ran out
                unit.status, unit.note = KERNEL, _verdict_note(unit)
            if unit.status in (PENDING, FAILED):
                unit.status = PYTORCH
                unit.note = unit.note or ("not searched: " + (self.stopped or "iterations spent"))
        self._drop_slower_than_pytorch()

    def _drop_slower_than_pytorch(self) -> None:
        """Measured kernels slower than their unit's PyTorch go back to PyTorch (see the module's
        docstring), all but the cheapest one if none is faster."""
        if not self.search.measured:
            return
        kernels = [u for u in self.units if u.status == KERNEL]
        slower = [u for u in kernels if u.best is not None and u.best.ms is not None
                  and u.best.speedup is not None and u.best.speedup < 1.0]
        if not slower:
            return
        # time lost against PyTorch on the unit: its kernel's ms minus PyTorch's (ms * speedup)
        spared = min(slower, key=lambda u: u.best.ms * (1.0 - u.best.speedup)) if len(slower) == len(kernels) else None
        for unit in slower:
            speed = f"{unit.best.speedup:.3g}x PyTorch's speed on this unit ({unit.best.ms:.4g} ms)"
            if unit is spared:
                unit.note += f"; kept at {speed}: the least time lost, and without it no unit would have a kernel"
                continue
            unit.status, unit.note = PYTORCH, f"kept in PyTorch: its best verified kernel ran at {speed}"
            self.event("slower", unit=unit.name, note=unit.note)

    def demote(self, unit: Unit, why: str) -> None:
        unit.status, unit.note = PYTORCH, why

    def kernels(self) -> list[Unit]:
        return [u for u in self.units if u.status == KERNEL]


def _verdict_note(unit: Unit) -> str:
    best = unit.best
    if best is None:
        return f"no proposal in {unit.proposals} call(s)" if unit.proposals else "no proposal"
    if best.accepted:
        measured = f", {best.ms:.4g} ms" if best.ms is not None else ""
        return f"verified kernel after {unit.proposals} proposal(s){measured}"
    if not best.source:
        return f"no code in {unit.proposals} reply(ies): {best.no_code}"
    record = best.record or {}
    extra = f" ({', '.join(best.flags)})" if best.flags else ""
    return f"best of {unit.proposals} proposal(s) judged {record.get('status')}{extra}: {str(record.get('reason'))[:200]}"
