"""``direct``: k independent samples per problem from one prompt, no feedback.

Each sample becomes its own candidate (the harness records each as an attempt, so pass@k and
best-of-k come from the records). Samples differ by seed (``seed + i``) and, by default, by a
temperature of 0.7 when k > 1 (0 for a single sample). Up to ``parallel`` samples are in flight
at once; each sample reserves its expected size against the budgets before it is sent
(``harness/llm/budget.py``), so parallel samples pass a limit by at most one reply.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from harness.candidate import Candidate
from harness.llm.base import BudgetExceeded, LLMError, Reply
from harness.llm.extract import extract_code
from harness.llm.prompts import generation_messages
from harness.llm.session import LLMOptions, LLMSession, positive_int, refuse_unknown, resolve_provider
from harness.llm_options import LLM_OPTIONS
from harness.options import Option, positive_int as whole_number
from harness.registry import register

SAMPLING_TEMPERATURE = 0.7
SAMPLES = Option("--samples", "k samples per problem", whole_number("--samples"), 1)
PARALLEL = Option("--parallel", "samples requested at once", whole_number("--parallel"), 4)


@register("generator", "direct")
class Direct:
    name = "direct"
    options = (SAMPLES, PARALLEL) + LLM_OPTIONS

    def __init__(self, **options: Any):
        options = dict(options)
        self.samples = positive_int(options, "samples", SAMPLES.default)
        self.parallel = positive_int(options, "parallel", PARALLEL.default)
        if options.get("temperature") is None:
            options["temperature"] = 0.0 if self.samples == 1 else SAMPLING_TEMPERATURE
        self.llm = LLMOptions.parse(options)
        refuse_unknown(self.name, options)
        self._provider = None

    def generate(self, problem: Any, ctx: Any) -> list[Candidate]:
        if self._provider is None:
            self._provider = resolve_provider(self.llm, ctx)
        session = LLMSession(self._provider, ctx)
        precision = getattr(getattr(ctx, "options", None), "precision", "fp32") or "fp32"
        messages = generation_messages(problem.source, self.llm.backend, dict(ctx.device_facts or {}), precision)
        with ThreadPoolExecutor(max_workers=min(self.parallel, self.samples)) as pool:
            outcomes = list(pool.map(lambda index: self._sample(session, messages, index), range(self.samples)))
        return self._candidates(session, outcomes)

    def _sample(self, session: LLMSession, messages: list[dict], index: int) -> tuple[int, Reply | None, dict | str]:
        """(index, reply, transcript step), or (index, None, the budget's reason) when it was not
        sent, or (index, None, the LLMError) when the endpoint failed it."""
        config = self.llm.config(seed=self.llm.seed + index)
        try:
            reply, step = session.ask("generator", messages, config, kind="sample", sample=index)
        except BudgetExceeded as stop:
            return index, None, stop.reason
        except LLMError as error:
            return index, None, error
        return index, reply, step

    def _candidates(self, session: LLMSession, outcomes: list[tuple[int, Reply | None, Any]]) -> list[Candidate]:
        stopped = next((why for _, reply, why in outcomes if reply is None and isinstance(why, str)), None)
        candidates = [self._candidate(session, index, reply, step) for index, reply, step in outcomes if reply]
        # A sample the endpoint failed is recorded as such (never as the model's failure), so pass@k
        # counts only samples the model was asked for and answered.
        candidates += [self._endpoint_failed(session, index, why) for index, reply, why in outcomes
                       if reply is None and isinstance(why, LLMError)]
        if not candidates:
            return [Candidate(source="", label="no sample", provider=session.provider_name, model=session.model,
                              provenance={"generator": self.name, "k": self.samples, "stopped": stopped})]
        if stopped:
            for candidate in candidates:
                if "endpoint_error" not in candidate.provenance:
                    candidate.provenance.update(stopped=stopped, samples_done=len(candidates))
        return sorted(candidates, key=lambda candidate: candidate.provenance["sample"])

    def _endpoint_failed(self, session: LLMSession, index: int, error: LLMError) -> Candidate:
        facts = session.endpoint_facts()
        provenance = {"generator": self.name, "sample": index, "k": self.samples, "stopped": f"llm error: {error}",
                      "endpoint_error": str(error), "endpoint_fatal": facts.get("endpoint_fatal", False)}
        retries = getattr(error, "retries", None)
        if retries is not None and retries.statuses:
            provenance["retries"] = retries.to_dict()
        return Candidate(source="", label=f"sample {index + 1}/{self.samples} (endpoint failed)",
                         provenance=provenance, provider=session.provider_name, model=session.model)

    def _candidate(self, session: LLMSession, index: int, reply: Reply, step: dict) -> Candidate:
        extraction = extract_code(reply.text)
        session.note(step, verdict=extraction.verdict, reason=extraction.reason)
        provenance = {"generator": self.name, "sample": index, "k": self.samples,
                      "temperature": self.llm.temperature, "seed": self.llm.seed + index,
                      "backend": self.llm.backend, "extraction": extraction.verdict, "cached": reply.cached}
        if reply.retries.count:
            provenance["retries"] = reply.retries.to_dict()
        if not extraction.source:
            provenance["no_code"] = extraction.reason
        return Candidate(source=extraction.source, label=f"sample {index + 1}/{self.samples}", usage=reply.usage,
                         transcript=[step], provenance=provenance, provider=reply.provider, model=reply.model)
