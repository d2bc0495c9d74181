"""Beam search for one unit's kernel: width B, depth D, K proposals per beam entry.

Round 1 asks K proposals from the unit's task alone. Each later round expands every entry that
entered the beam in the previous round with K proposals: a broken entry gets the judge's verdict to
repair; a correct one (only where speed is measured) is asked to run faster. Every proposal is
judged on its own against the unit's sub-problem, and the beam keeps the B best: correct, clean
kernels first, then the fastest measured, then the fewest tokens. Where speed is not measured (the
CPU's Triton interpreter) nothing can beat the first correct kernel but tokens, so the search stops
there. A provider known to answer a prompt the same way every time (``builtin``), or one that just
repeated itself, is not asked the same prompt again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from harness.candidate import Candidate
from harness.llm.extract import extract_code
from harness.llm.prompts import feedback_text, generation_messages, repair_messages
from harness.records.usage import Usage
from submitters.mkevolve.units import Proposal, Unit

DETERMINISTIC_PROVIDERS = frozenset({"builtin"})
FASTER = ("\n\nThis kernel is correct. Rewrite it to run faster while keeping the results correct (fuse more "
          "work, tune block sizes and warps, cut memory traffic). Reply with the complete file in one ```python block.")
NO_KERNEL = ("\n\nNo custom kernel ran: the computation must happen in your own {backend} kernels, not in PyTorch "
             "operations. Reply with the complete file in one ```python block.")


@dataclass(frozen=True)
class SearchShape:
    beam_width: int = 2
    depth: int = 2
    proposals: int = 2


class UnitSearch:
    """Searches kernels for units of one problem; shares the LLM session, the judge and the meter."""

    def __init__(self, session: Any, llm: Any, facts: dict, precision: str, verify: Callable[[Any, str], dict],
                 shape: SearchShape, measured: bool, meter: Callable[[str, Usage], None]):
        self.session, self.llm, self.facts, self.precision = session, llm, facts, precision
        self.verify, self.shape, self.measured, self.meter = verify, shape, measured, meter
        self.deterministic = session.provider_name in DETERMINISTIC_PROVIDERS
        self.calls = 0

    def search(self, unit: Unit, subproblem: Any, prompt: str, stage: str) -> Proposal | None:
        """The best accepted proposal for ``unit`` (also left in ``unit.best``), or None. A spent budget
        (BudgetExceeded) propagates, with what was found so far kept in ``unit.best``."""
        seen: dict[str, Proposal] = {}
        beam: list[Proposal] = []
        frontier: list[Proposal | None] = [None]
        try:
            for depth in range(self.shape.depth):
                children = [child for parent in frontier
                            for child in self._expand(unit, subproblem, prompt, stage, parent, depth, seen)]
                beam = sorted(beam + children, key=Proposal.score)[:self.shape.beam_width]
                if beam and beam[0].accepted and not self.measured:
                    break
                frontier = [p for p in beam if p.source and any(p is child for child in children)]
                if not frontier:
                    break
        finally:  # also when a budget stops the search midway: nothing judged is lost
            pool = sorted(set(beam) | set(seen.values()), key=Proposal.score)
            accepted = [p for p in pool if p.accepted]
            unit.best = pool[0] if pool else unit.best
        return accepted[0] if accepted else None

    def _expand(self, unit: Unit, subproblem: Any, prompt: str, stage: str, parent: Proposal | None, depth: int,
                seen: dict[str, Proposal]) -> list[Proposal]:
        messages = self._messages(prompt, parent)
        made: list[Proposal] = []
        for index in range(1 if self.deterministic else self.shape.proposals):
            proposal = self._propose(unit, subproblem, messages, stage, depth, index, seen)
            if proposal is None:  # a repeat: asking again would only repeat it again
                break
            made.append(proposal)
            if proposal.accepted and not self.measured:  # unmeasured, only tokens could still improve
                break
        return made

    def _propose(self, unit: Unit, subproblem: Any, messages: list[dict], stage: str, depth: int, index: int,
                 seen: dict[str, Proposal]) -> Proposal | None:
        self.calls += 1
        reply, step = self.session.ask("generator", messages, self.llm.config(seed=self.llm.seed + self.calls),
                                       kind=stage, unit=unit.name, depth=depth + 1, proposal=index)
        unit.usage = unit.usage + reply.usage
        unit.proposals += 1
        self.meter(stage, reply.usage)
        extraction = extract_code(reply.text)
        if not extraction.source:
            self.session.note(step, verdict=extraction.verdict, reason=extraction.reason)
            return Proposal("", "", reply.usage, step["step"], depth, no_code=_first_line(reply.text) or extraction.reason)
        sha = Candidate(extraction.source).sha
        if sha in seen:
            self.session.note(step, verdict="duplicate", reason=f"the same kernel as step {seen[sha].step}")
            return None
        record = self.verify(subproblem, extraction.source)
        self.session.note(step, verdict=record.get("status"), reason=record.get("reason"), candidate_sha=sha,
                          candidate_ms=record.get("candidate_ms"), speedup=record.get("speedup"),
                          flags=record.get("flags"))
        seen[sha] = Proposal(extraction.source, sha, reply.usage, step["step"], depth, record)
        return seen[sha]

    def _messages(self, prompt: str, parent: Proposal | None) -> list[dict]:
        backend = self.llm.backend
        if parent is None:
            return generation_messages(prompt, backend, self.facts, self.precision)
        feedback = feedback_text(parent.record or {})
        if parent.pytorch_only:
            feedback += NO_KERNEL.format(backend=backend)
        elif parent.accepted:
            feedback += FASTER
        return repair_messages(prompt, backend, self.facts, parent.source, feedback, self.precision)


def _first_line(text: str) -> str:
    stripped = (text or "").strip()
    return stripped.splitlines()[0][:300] if stripped else ""
