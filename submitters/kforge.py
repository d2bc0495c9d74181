"""``kforge``: a generation agent and a performance-analysis agent refine one kernel.

Functional passes: the generation agent writes a kernel; the judge's verdict (compile error,
runtime error, bounded mismatch report) goes back to it until the kernel is correct or
``max_functional_passes`` generation calls are spent (the first draft counts).
Optimisation passes: the analysis agent reads the correct kernel's profile (per-kernel times from
the torch profiler; achieved FLOP rate and bandwidth against the speed of light) and recommends
one change; the generation agent applies it. A broken attempt is repaired with the functional
passes left. At most ``max_optimisation_passes`` such passes; the fastest correct kernel wins
(the last kernel when none was correct). Every step is kept in the candidate's transcript.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from harness.candidate import Candidate
from harness.llm.base import BudgetExceeded, LLMError
from harness.llm.extract import extract_code
from harness.llm.prompts import (
    analysis_messages,
    feedback_text,
    generation_messages,
    no_code_feedback,
    optimisation_messages,
    repair_messages,
)
from harness.llm.session import LLMOptions, LLMSession, positive_int, refuse_unknown, resolve_provider
from harness.llm_options import LLM_OPTIONS
from harness.options import Option, positive_int as at_least_one, whole_number
from harness.registry import register

FUNCTIONAL_PASSES = Option("--max-functional-passes", "repair passes until correct",
                           at_least_one("--max-functional-passes"), 5)
OPTIMISATION_PASSES = Option("--max-optimisation-passes", "profile-guided optimisation passes; 0 stops at the "
                             "first correct kernel",
                             whole_number("--max-optimisation-passes"), 3)


@dataclass
class Draft:
    source: str
    record: dict
    step: int

    @property
    def correct(self) -> bool:
        correct = self.record.get("correct")
        return bool(correct) if correct is not None else self.record.get("status") == "ok"

    @property
    def flagged(self) -> bool:
        return bool(self.record.get("flags"))

    @property
    def ms(self) -> float | None:
        return self.record.get("candidate_ms")


@register("generator", "kforge")
class KForge:
    name = "kforge"
    options = (FUNCTIONAL_PASSES, OPTIMISATION_PASSES) + LLM_OPTIONS

    def __init__(self, **options: Any):
        options = dict(options)
        self.max_functional_passes = positive_int(options, "max_functional_passes", FUNCTIONAL_PASSES.default)
        self.max_optimisation_passes = positive_int(options, "max_optimisation_passes", OPTIMISATION_PASSES.default, minimum=0)
        self.llm = LLMOptions.parse(options)
        refuse_unknown(self.name, options)
        self._provider = None

    def generate(self, problem: Any, ctx: Any) -> list[Candidate]:
        if self._provider is None:
            self._provider = resolve_provider(self.llm, ctx)
        return [Refinement(self, problem, ctx, LLMSession(self._provider, ctx)).run()]


class Refinement:
    """One problem's refinement: the state of both loops and the transcript they leave."""

    def __init__(self, forge: KForge, problem: Any, ctx: Any, session: LLMSession):
        self.forge, self.llm, self.problem, self.ctx, self.session = forge, forge.llm, problem, ctx, session
        self.facts = dict(getattr(ctx, "device_facts", None) or {})
        self.precision = getattr(getattr(ctx, "options", None), "precision", "fp32") or "fp32"
        self.functional_used = self.optimisation_used = 0
        self.best: Draft | None = None
        self.last: Draft | None = None
        self.no_code: str | None = None
        self.stopped: str | None = None
        self.optimisation_skipped: str | None = None
        self._profile_kw = _accepts(ctx.evaluate, "profile")

    def run(self) -> Candidate:
        try:
            first = generation_messages(self.problem.source, self.llm.backend, self.facts, self.precision)
            correct = self._functional(first, timing=False)
            if correct is not None and self.forge.max_optimisation_passes:
                self._optimise(correct)
            elif correct is not None:
                self.best = correct
        except BudgetExceeded as stop:
            self.stopped = stop.reason
        except LLMError as error:
            self.stopped = f"llm error: {error}"
        return self._result()

    # -- the two loops -------------------------------------------------------------------------

    def _functional(self, messages: list[dict], timing: bool) -> Draft | None:
        while self.functional_used < self.forge.max_functional_passes:
            self.functional_used += 1
            draft, messages = self._attempt(messages, "functional", self.functional_used, timing)
            if draft is not None:
                return draft
        return None

    def _optimise(self, correct: Draft) -> None:
        self.best = self._timed(correct)
        if not self.best.correct:  # wrong on the timed inputs: it was never correct
            self.last, self.best = self.best, None
            return
        if self.best.ms is None:  # nothing to profile or to beat (the CPU's Triton interpreter): save the tokens
            remarks = "; ".join(map(str, self.best.record.get("remarks") or [])) or "no timing in the verdict"
            self.optimisation_skipped = f"speed not measured ({remarks})"
            return
        while self.optimisation_used < self.forge.max_optimisation_passes:
            self.optimisation_used += 1
            recommendation = self._analyse(self.best)
            messages = optimisation_messages(self.problem.source, self.llm.backend, self.facts, self.best.source,
                                             self.best.record, recommendation, self.precision)
            draft, messages = self._attempt(messages, "optimisation", self.optimisation_used, timing=True)
            if draft is None:
                draft = self._functional(messages, timing=True)
            if draft is not None and _faster(draft, self.best):
                self.best = draft

    def _analyse(self, draft: Draft) -> str:
        messages = analysis_messages(self.problem.source, draft.source, draft.record, self.facts, self.precision)
        reply, _ = self.session.ask("analyst", messages, self.llm.config(), kind="optimisation",
                                    **{"pass": self.optimisation_used, "of_step": draft.step})
        return reply.text

    # -- one generation call, judged -----------------------------------------------------------

    def _attempt(self, messages: list[dict], kind: str, number: int, timing: bool) -> tuple[Draft | None, list[dict]]:
        """Ask, extract, judge. A correct draft, or None and the messages for the repair."""
        reply, step = self.session.ask("generator", messages, self.llm.config(), kind=kind, **{"pass": number})
        extraction = extract_code(reply.text)
        if not extraction.source:
            self.no_code = extraction.reason
            self.session.note(step, verdict=extraction.verdict, reason=extraction.reason)
            feedback = no_code_feedback(extraction.reason, truncated=reply.finish_reason == "length")
            # The reply itself is the assistant's turn: without it every later pass would send the
            # same prompt again and, at temperature 0, get the same reply.
            return None, self._repair("", feedback, reply_text=reply.text)
        record = self._evaluate(extraction.source, timing)
        draft = Draft(extraction.source, record, step["step"])
        self.last = draft
        self.session.note(step, verdict=record.get("status"), reason=record.get("reason"),
                          candidate_sha=_sha(extraction.source), candidate_ms=record.get("candidate_ms"),
                          speedup=record.get("speedup"))
        if draft.correct:
            return draft, messages
        return None, self._repair(extraction.source, feedback_text(record))

    def _repair(self, source: str, feedback: str, reply_text: str | None = None) -> list[dict]:
        return repair_messages(self.problem.source, self.llm.backend, self.facts, source, feedback, self.precision,
                               reply_text=reply_text)

    def _evaluate(self, source: str, timing: bool) -> dict:
        if timing and self._profile_kw:
            return dict(self.ctx.evaluate(source, timing=True, profile=True))
        return dict(self.ctx.evaluate(source, timing=timing))

    def _timed(self, draft: Draft) -> Draft:
        """The first correct draft, judged again with timing (and a profile) for the analyst."""
        record = self._evaluate(draft.source, timing=True)
        self.session.note(self.session.transcript[draft.step], verdict=record.get("status"),
                          candidate_ms=record.get("candidate_ms"), speedup=record.get("speedup"))
        return Draft(draft.source, record, draft.step)

    # -- the outcome ---------------------------------------------------------------------------

    def _result(self) -> Candidate:
        chosen = self.best or self.last
        provenance = {
            "generator": "kforge", "backend": self.llm.backend, "correct": bool(self.best),
            "functional_passes": self.functional_used, "optimisation_passes": self.optimisation_used,
            "max_functional_passes": self.forge.max_functional_passes,
            "max_optimisation_passes": self.forge.max_optimisation_passes,
        }
        if chosen is not None:
            provenance.update(chosen_step=chosen.step, chosen_ms=chosen.ms)
        elif self.no_code:
            provenance["no_code"] = self.no_code
        if self.stopped:
            provenance["stopped"] = self.stopped
        if self.optimisation_skipped:
            provenance["optimisation_skipped"] = self.optimisation_skipped
        provenance.update(self.session.endpoint_facts())
        label = "best correct" if self.best else ("last (incorrect)" if chosen else "none")
        return Candidate(source=chosen.source if chosen else "", label=f"kforge {label}", usage=self.session.usage,
                         transcript=self.session.transcript, provenance=provenance,
                         provider=self.session.provider_name, model=self.session.model)


def _faster(draft: Draft, best: Draft) -> bool:
    """A correct draft beats the best when it is measured faster, or is clean where the best was flagged."""
    if not draft.correct or draft.flagged:
        return False
    if best.flagged:
        return True
    return draft.ms is not None and (best.ms is None or draft.ms < best.ms)


def _accepts(function: Any, keyword: str) -> bool:
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == keyword or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _sha(source: str) -> str:
    return Candidate(source).sha
