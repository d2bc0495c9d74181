"""Choosing a decomposition, and the sub-problems of its units (captured inputs on disk, built lazily).

Decomposition is tried finest first: the fx graph; else the child modules forward calls; else the
whole model as one unit. The reason each finer way did not apply is kept for the provenance.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from submitters.mkevolve import capture as capturing
from submitters.mkevolve.coarse import ModuleDecomposition, WholeDecomposition
from submitters.mkevolve.compose import ProblemParts
from submitters.mkevolve.graph import FxDecomposition, trace
from submitters.mkevolve.subproblem import judge_source, prompt_source
from submitters.mkevolve.units import PENDING, Undecomposable, Unit


def decompose(problem: Any, opts: Any, max_units: int) -> tuple[Any, Any]:
    """(decomposition, model run or None)."""
    try:
        run = capturing.ModelRun(problem, opts)
    except Exception as error:  # noqa: BLE001 - the judge will report a broken reference; we just do not split it
        return WholeDecomposition(f"the reference could not be run here ({type(error).__name__}: {error})"), None
    reasons = []
    for way, attempt in (("fx", _fx), ("modules", _modules)):
        try:
            return _searchable(attempt(problem, run, max_units)), run
        except Undecomposable as why:
            reasons.append(f"{way}: {why}")
        except Exception as error:  # noqa: BLE001 - a model this way cannot handle: the next, coarser way
            reasons.append(f"{way}: failed ({type(error).__name__}: {str(error)[:200]})")
    return WholeDecomposition("; ".join(reasons)), run


def _fx(problem: Any, run: Any, max_units: int) -> FxDecomposition:
    gm = trace(run.model)
    info, _ = run.run_graph(gm)
    return FxDecomposition(gm, info, run.model, max_units)


def _modules(problem: Any, run: Any, max_units: int) -> ModuleDecomposition:
    modules = ModuleDecomposition(run.model, ProblemParts(problem.source).forward(), max_units)
    modules.accept_capture(*run.run_hooked(modules.paths))
    return modules


def _searchable(decomposition: Any) -> Any:
    """The decomposition, unless none of its units can be searched (then a coarser way is tried)."""
    if not any(unit.status == PENDING for unit in decomposition.units):
        notes = "; ".join(dict.fromkeys(unit.note for unit in decomposition.units))
        raise Undecomposable(f"no unit can be searched ({notes})")
    return decomposition


class Workspace:
    """The sub-problems of one problem's units, keyed by the operations they cover."""

    def __init__(self, problem: Any, opts: Any, decomposition: Any, run: Any):
        self.problem, self.opts, self.decomposition, self.run = problem, opts, decomposition, run
        self.folder = Path(tempfile.mkdtemp(prefix="crucible-mkevolve-"))
        self._built: dict[tuple[int, int], tuple[Any, str] | str] = {}   # a str: why it could not be built

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def title(self, unit: Unit) -> str:
        return f"unit {unit.name} ({', '.join(self.decomposition.ops(unit))}) of {self.problem.id}"

    def subproblem(self, unit: Unit) -> tuple[Any, str]:
        """(the judge's Problem, the source shown in prompts) for ``unit``; Undecomposable when its
        sub-problem could not be made (the unit then stays PyTorch)."""
        if self.decomposition.mode == "whole":
            return self.problem, self.problem.source
        if unit.span not in self._built:
            self.prepare([unit])
        built = self._built[unit.span]
        if isinstance(built, str):
            raise Undecomposable(built)
        return built

    def prepare(self, units: list[Unit]) -> None:
        """Capture the inputs of every unit in ``units`` not captured yet, in one run of the model."""
        missing = [u for u in units if u.span not in self._built]
        if not missing or self.decomposition.mode == "whole":
            return
        try:
            inputs = self._capture(missing)
        except Undecomposable as why:
            self._built.update({unit.span: f"capture failed: {why}" for unit in missing})
            return
        for unit in missing:
            try:
                self._build(unit, inputs[unit.name])
            except Undecomposable as why:
                self._built[unit.span] = f"no sub-problem: {why}"

    def _capture(self, units: list[Unit]) -> dict[str, list]:
        decomposition = self.decomposition
        if decomposition.mode == "modules":
            return {unit.name: decomposition.captured[decomposition.path(unit)] for unit in units}
        wanted: dict = {}
        for unit in units:
            wanted.setdefault(decomposition.nodes[unit.start], []).append((unit.name, decomposition.inputs(unit)))
        _, captured = self.run.run_graph(decomposition.gm, wanted)
        return captured

    def _build(self, unit: Unit, inputs: list) -> None:
        from harness.problems.problem import problem_from_source

        spec = self.decomposition.spec(unit)
        stem = f"{unit.span[0]}_{unit.span[1]}"
        path = capturing.save(self.folder, stem, inputs, capturing.sub_state(spec))
        title = self.title(unit)
        source = judge_source(spec, title, path)
        sub = problem_from_source(source, f"{self.problem.id}/mk_{stem}", level=self.problem.level,
                                  suite="mkevolve", size=getattr(self.opts, "size", "small"))
        # The prompt names no unit, so a unit met again after a split and a merge gets the same prompt.
        prompt = prompt_source(spec, f"A submodule ({', '.join(self.decomposition.ops(unit))})", inputs)
        self._built[unit.span] = (sub, prompt)
