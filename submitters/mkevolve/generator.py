"""``mkevolve``: co-evolve a modular decomposition of the model with LLM-written sub-kernels.

After MKEvolve (2026; built from its abstract, see docs/MKEVOLVE.md). For one problem:

1. *decompose* (no LLM call): trace the model with torch.fx and cut it into units (a coarser
   fallback by child modules, or the whole model, where fx does not apply); run the full model once
   to capture the inputs each unit really receives;
2. *search*: a beam search per unit (``beam_width`` B, ``depth`` D, ``proposals`` K), every proposal
   judged on its own by the harness against the unit's sub-problem;
3. *split* units that stay incorrect, *merge* adjacent verified units where fusion pays (see
   ``evolve.py``), for ``iterations`` rounds;
4. *compose* the verified kernels into one ``ModelNew`` (units without one stay PyTorch) and judge it
   end to end; a kernel that breaks the whole is put back to PyTorch.

The candidate's provenance holds, per unit, its operations, status, kernel sha, speedup and tokens,
the usage of each stage, the merge decisions, and how the composition was checked.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from harness.candidate import Candidate
from harness.errors import UserError
from harness.llm.session import LLMOptions, LLMSession, positive_int, refuse_unknown, resolve_provider
from harness.llm_options import LLM_OPTIONS
from harness.registry import register
from harness.records.usage import Usage
from submitters.mkevolve.compose import compose
from submitters.mkevolve.evolve import STAGES, Evolution
from submitters.mkevolve.search import SearchShape, UnitSearch
from submitters.mkevolve.units import KERNEL, Unit
from submitters.mkevolve.workspace import Workspace, decompose

SAMPLING_TEMPERATURE = 0.7
DEFAULT_MERGE_SHARE = 0.25


@register("generator", "mkevolve")
class MKEvolve:
    name = "mkevolve"
    options = LLM_OPTIONS

    def __init__(self, **options: Any):
        options = dict(options)
        self.shape = SearchShape(beam_width=positive_int(options, "beam_width", 2),
                                 depth=positive_int(options, "depth", 2),
                                 proposals=positive_int(options, "proposals", 2))
        self.iterations = positive_int(options, "iterations", 2)
        self.max_submodules = positive_int(options, "max_submodules", 6)
        self.sub_trials = positive_int(options, "sub_trials", 3)
        self.merge_share = _share(options.pop("merge_share", None))
        if options.get("temperature") is None:
            options["temperature"] = 0.0 if self.shape.proposals == 1 else SAMPLING_TEMPERATURE
        self.llm = LLMOptions.parse(options)
        refuse_unknown(self.name, options)
        self._provider = None

    def generate(self, problem: Any, ctx: Any, verify: Any = None) -> list[Candidate]:
        """``verify(subproblem, source) -> record`` replaces the harness's judge for sub-problems (tests)."""
        if self._provider is None:
            self._provider = resolve_provider(self.llm, ctx)
        return [Run(self, problem, ctx, LLMSession(self._provider, ctx), verify).candidate()]

    def settings(self) -> dict:
        return {"beam_width": self.shape.beam_width, "depth": self.shape.depth, "proposals": self.shape.proposals,
                "iterations": self.iterations, "max_submodules": self.max_submodules, "merge_share": self.merge_share,
                "sub_trials": self.sub_trials,
                "backend": self.llm.backend, "temperature": self.llm.temperature}


def _share(value: Any) -> float:
    if value is None:
        return DEFAULT_MERGE_SHARE
    try:
        share = float(value)
    except (TypeError, ValueError):
        share = -1.0
    if not 0.0 <= share <= 1.0:
        raise UserError(f"generator option merge_share={value!r} must be a number from 0 to 1")
    return share


class HarnessJudge:
    """Sub-problems judged by the harness (own cache and secret), once per distinct source, with at most
    ``trials`` correctness trials (the composed model gets the run's full count end to end)."""

    def __init__(self, opts: Any, measured: bool, trials: int):
        self.opts = replace(opts, timing=measured, compile_baseline="off", trials=min(opts.trials, trials))
        self.records: dict[tuple, dict] = {}
        self.cache = None

    def __call__(self, subproblem: Any, source: str) -> dict:
        from harness.judge.evaluate import EvalCache, evaluate

        key = (subproblem.id, subproblem.source_sha, Candidate(source).sha)
        if key not in self.records:
            self.cache = self.cache or EvalCache(self.opts.secret)
            record = evaluate(subproblem, source, self.opts, self.cache, identity={"generator": "mkevolve"})
            record.pop("candidate_source", None)
            self.records[key] = record
        return self.records[key]


class Run:
    """One problem through the four stages; ``candidate()`` is the result."""

    def __init__(self, generator: MKEvolve, problem: Any, ctx: Any, session: LLMSession, verify: Any):
        from harness.judge.evaluate import EvalOptions

        self.generator, self.problem, self.ctx, self.session = generator, problem, ctx, session
        self.opts = getattr(ctx, "options", None) or EvalOptions()
        self.facts = dict(getattr(ctx, "device_facts", None) or {})
        self.measured = self.opts.device == "cuda" and bool(self.opts.timing)
        self.verify = verify or HarnessJudge(self.opts, self.measured, generator.sub_trials)
        self.stages = {stage: Usage() for stage in STAGES}
        self.composition: dict = {}

    def candidate(self) -> Candidate:
        stopped = self.session.over_budget()
        if stopped:
            return self._result("", {"stopped": stopped})
        decomposition, model_run = decompose(self.problem, self.opts, self.generator.max_submodules)
        workspace = Workspace(self.problem, self.opts, decomposition, model_run)
        self.event("decompose", mode=decomposition.mode, units=[self._describe(decomposition, u)
                                                                for u in decomposition.units],
                   why=getattr(decomposition, "why", None))
        try:
            evolution = Evolution(decomposition, workspace, self._searcher(), self.generator.iterations,
                                  self.generator.merge_share, self.facts, self.event)
            evolution.run()
            source = self._compose(decomposition, evolution)
        finally:
            workspace.close()
        extra = {"stopped": evolution.stopped} if evolution.stopped else {}
        if not source:
            extra["no_code"] = "no unit got a verified kernel: " + "; ".join(
                f"{u.name}: {u.note}" for u in evolution.units)[:2000]
        return self._result(source, extra, decomposition, evolution)

    def _searcher(self) -> UnitSearch:
        precision = getattr(self.opts, "precision", "fp32") or "fp32"
        return UnitSearch(self.session, self.generator.llm, self.facts, precision, self.verify, self.generator.shape,
                          self.measured, self._meter)

    def _meter(self, stage: str, usage: Usage) -> None:
        self.stages[stage] = self.stages[stage] + usage

    def event(self, kind: str, **fields: Any) -> None:
        """A step of the method itself (not an LLM call) in the transcript."""
        self.session.transcript.append({"agent": "mkevolve", "kind": kind, "step": len(self.session.transcript),
                                        **fields})

    # -- compose ------------------------------------------------------------------------------------

    def _compose(self, decomposition: Any, evolution: Evolution) -> str:
        """The composed source, checked end to end; kernels that break the whole go back to PyTorch."""
        kernels = evolution.kernels()
        if not kernels:
            return ""
        if decomposition.mode == "whole":
            self.composition = {"checked": "as the whole problem, during the search"}
            return kernels[0].best.source
        source, record = self._check(decomposition, evolution, kernels)
        if record.get("correct"):
            return source
        if len(kernels) == 1:
            self.composition["outcome"] = "the only kernel fails end to end; the composition is returned as it is"
            return source
        survivors = [u for u in kernels if self._check(decomposition, evolution, [u])[1].get("correct")]
        if not survivors:
            self.composition["outcome"] = "no kernel passes end to end on its own; the full composition is returned"
            return source
        for unit in kernels:
            if unit not in survivors:
                evolution.demote(unit, f"kept in PyTorch: the composition failed end to end with this kernel "
                                       f"({str(record.get('reason'))[:200]})")
        if len(survivors) > 1 and not self._check(decomposition, evolution, survivors)[1].get("correct"):
            for unit in survivors[1:]:
                evolution.demote(unit, "kept in PyTorch: correct alone, but not together with the other kernels")
            survivors = survivors[:1]
        return self._source(decomposition, evolution, survivors)

    def _check(self, decomposition: Any, evolution: Evolution, kernels: list[Unit]) -> tuple[str, dict]:
        source = self._source(decomposition, evolution, kernels)
        record = dict(self.ctx.evaluate(source, timing=False))
        checks = self.composition.setdefault("checks", [])
        checks.append({"kernels": [u.name for u in kernels], "status": record.get("status"),
                       "reason": str(record.get("reason") or "")[:300], "flags": record.get("flags") or []})
        self.event("compose", kernels=[u.name for u in kernels], verdict=record.get("status"),
                   reason=record.get("reason"))
        return source, record

    def _source(self, decomposition: Any, evolution: Evolution, kernels: list[Unit]) -> str:
        chosen = {id(u) for u in kernels}
        notes = [f"Composed by Crucible's mkevolve generator for {self.problem.id} ({decomposition.mode} decomposition)."]
        for unit in evolution.units:
            kind = f"kernel {unit.best.sha}" if id(unit) in chosen else "PyTorch"
            notes.append(f"{unit.name} [{', '.join(decomposition.ops(unit))}]: {kind}")
        return compose(self.problem.source, decomposition, [(u, u.best.source) for u in kernels], notes)

    # -- the result ---------------------------------------------------------------------------------

    def _describe(self, decomposition: Any, unit: Unit) -> dict:
        described = {"name": unit.name, "ops": decomposition.ops(unit), "status": unit.status,
                     "kernel_source_sha": unit.best.sha if unit.status == KERNEL and unit.best else None,
                     "speedup": unit.best.speedup if unit.status == KERNEL and unit.best else None,
                     "ms": unit.best.ms if unit.status == KERNEL and unit.best else None,
                     "tokens": unit.usage.total_tokens, "proposals": unit.proposals, "note": unit.note}
        described.update(unit.origin)
        return described

    def _result(self, source: str, extra: dict, decomposition: Any = None, evolution: Evolution | None = None) -> Candidate:
        provenance: dict[str, Any] = {"generator": "mkevolve", **self.generator.settings(),
                                      "speed_measured": self.measured,
                                      "stage_usage": {k: v.to_dict() for k, v in self.stages.items()}}
        if evolution is not None:
            kernels = [u for u in evolution.units if u.status == KERNEL]
            provenance.update(
                decomposition=decomposition.mode, decomposition_note=getattr(decomposition, "why", None),
                submodules=[self._describe(decomposition, u) for u in evolution.units],
                history=[self._describe(decomposition, u) for u in evolution.replaced],
                merges=evolution.merges, composition=self.composition, kernels=len(kernels),
                merge_policy="measured time" if self.measured else "byte heuristic (speed not measured)")
        provenance.update(self.session.endpoint_facts())  # retries, and an endpoint failure that ended it
        provenance.update(extra)
        count = provenance.get("kernels", 0)
        label = f"mkevolve composition ({count} kernel{'s' if count != 1 else ''})" if source else "mkevolve: none"
        return Candidate(source=source, label=label, usage=self.session.usage, transcript=self.session.transcript,
                         provenance=provenance, provider=self.session.provider_name, model=self.session.model)
