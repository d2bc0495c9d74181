"""The kforge generator: functional repair from the judge's feedback, then profile-guided optimisation."""

from __future__ import annotations

import pytest

from harness.candidate import Budget
from harness.llm.retry import RetryPolicy
from harness.registry import create
from harness.records.usage import total
from tests.llm.fake_judge import BROKEN, CORRECT, FAST, SLOW, WRONG
from tests.llm.generator_support import answer, context, problem
from tests.llm.scripted_server import completion, error


def forge(**options):
    options.setdefault("max_optimisation_passes", 0)
    return create("generator", "kforge", **options)


def last_user_message(request) -> str:
    return request["messages"][-1]["content"]


def test_a_compile_error_goes_back_to_the_model_until_it_is_fixed(server, make_provider):
    server.reply(answer(BROKEN), prompt_tokens=900, completion_tokens=300)
    server.reply(answer(CORRECT), prompt_tokens=1400, completion_tokens=280)
    [candidate] = forge().generate(problem(), context(make_provider()))
    assert candidate.source == CORRECT and candidate.provenance["correct"] is True
    repair = server.requests[1]["messages"]
    assert repair[-2]["role"] == "assistant" and "class ModelNew" in repair[-2]["content"]
    assert last_user_message(server.requests[1]).startswith("Feedback: compile_error\nSyntaxError")
    assert [step["verdict"] for step in candidate.transcript] == ["compile_error", "ok"]
    assert candidate.provenance["functional_passes"] == 2


def test_wrong_values_come_back_as_a_bounded_mismatch_report(server, make_provider):
    server.reply(answer(WRONG))
    server.reply(answer(CORRECT))
    [candidate] = forge().generate(problem(), context(make_provider()))
    feedback = last_user_message(server.requests[1])
    assert feedback.startswith("Feedback: incorrect\n")
    assert "elements differ" in feedback and "expected" in feedback
    assert candidate.source == CORRECT


def test_usage_is_exactly_the_sum_the_server_reported(server, make_provider):
    server.reply(answer(BROKEN), prompt_tokens=900, completion_tokens=300, cached_tokens=100, reasoning_tokens=40)
    server.reply(answer(CORRECT), prompt_tokens=1400, completion_tokens=280, cached_tokens=700, reasoning_tokens=0)
    [candidate] = forge().generate(problem(), context(make_provider()))
    usage = candidate.usage
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens, usage.reasoning_tokens) == (2300, 800, 580, 40)
    assert usage.calls == 2 and not usage.estimated
    assert usage == total(make_usage(step) for step in candidate.transcript)
    expected_cost = ((2300 - 800) * 0.15 + 800 * 0.075 + 580 * 0.60) / 1e6  # gpt-4o-mini
    assert usage.cost_usd == pytest.approx(expected_cost)


def make_usage(step):
    from harness.records.usage import Usage

    return Usage.from_dict(step["usage"])


def test_a_reply_without_code_is_told_so_and_the_loop_goes_on(server, make_provider):
    server.reply("Let me think about tiling first.")
    server.reply(answer(CORRECT))
    [candidate] = forge().generate(problem(), context(make_provider()))
    feedback = last_user_message(server.requests[1])
    assert feedback.startswith("Feedback: compile_error\nNo candidate could be taken from your reply")
    assert candidate.source == CORRECT
    assert candidate.transcript[0]["verdict"] == "no_code"


def test_functional_passes_are_limited_and_the_last_kernel_is_returned(server, make_provider):
    server.responder = lambda request: completion(answer(WRONG))
    [candidate] = forge(max_functional_passes=3).generate(problem(), context(make_provider()))
    assert len(server.requests) == 3
    assert candidate.source == WRONG and candidate.provenance["correct"] is False
    assert candidate.label == "kforge last (incorrect)"


def test_optimisation_gives_the_analyst_a_profile_and_the_generator_its_advice(server, make_provider):
    server.reply(answer(CORRECT))                                         # functional pass: correct, 1.0 ms
    server.reply("Bottleneck: two passes over memory. Fuse the scale into the ReLU kernel.")  # analyst
    server.reply(answer(FAST))                                            # optimisation: 0.25 ms
    ctx = context(make_provider())
    [candidate] = forge(max_optimisation_passes=1).generate(problem(), ctx)
    analyst = server.requests[1]
    assert "performance analyst" in analyst["messages"][0]["content"]
    assert "fake_relu_kernel: 1000.0 us" in last_user_message(analyst)
    assert "Achieved bandwidth" in last_user_message(analyst) and "% of peak" in last_user_message(analyst)
    advice = last_user_message(server.requests[2])
    assert advice.startswith("Feedback: ok\n") and "Fuse the scale into the ReLU kernel." in advice
    assert candidate.source == FAST and candidate.provenance["chosen_ms"] == 0.25
    assert [step["agent"] for step in candidate.transcript] == ["generator", "analyst", "generator"]
    assert any(call["profile"] for call in ctx.judge.calls)


def test_a_slower_or_broken_optimisation_keeps_the_best_kernel(server, make_provider):
    server.reply(answer(CORRECT))          # 1.0 ms
    server.reply("Try bigger blocks.")
    server.reply(answer(SLOW))             # correct but 4.0 ms
    server.reply("Try vectorised loads.")
    server.reply(answer(WRONG))            # broken; repaired with the functional passes left...
    server.reply(answer(WRONG))            # ...which run out
    [candidate] = forge(max_functional_passes=2, max_optimisation_passes=2).generate(problem(), context(make_provider()))
    assert candidate.source == CORRECT and candidate.provenance["correct"] is True
    assert candidate.provenance["optimisation_passes"] == 2 and candidate.provenance["functional_passes"] == 2
    assert len(server.requests) == 6


def test_max_cost_stops_refinement_and_keeps_what_was_paid_for(server, make_provider):
    server.responder = lambda request: completion(answer(BROKEN), prompt_tokens=10_000, completion_tokens=2_000)
    [candidate] = forge(max_functional_passes=5).generate(problem(), context(make_provider(), Budget(max_cost_usd=0.004)))
    assert len(server.requests) == 2
    assert candidate.provenance["stopped"] == "cost budget spent: $0.0054 > $0.0040"
    assert candidate.source == BROKEN and len(candidate.transcript) == 2


def test_an_endpoint_that_keeps_failing_returns_an_empty_candidate_saying_why(server, make_provider):
    server.responder = lambda request: error(503, "maintenance")
    provider = make_provider(retry=RetryPolicy(attempts=2, base_delay_s=0.0))
    [candidate] = forge().generate(problem(), context(provider))
    assert candidate.source == ""
    assert "llm error" in candidate.provenance["stopped"] and "maintenance" in candidate.provenance["stopped"]


def test_transcripts_hold_every_step_for_the_drill_down(server, make_provider):
    server.reply(answer(WRONG))
    server.reply(answer(CORRECT))
    [candidate] = forge().generate(problem(), context(make_provider()))
    first, second = candidate.transcript
    assert (first["step"], second["step"]) == (0, 1)
    assert first["kind"] == "functional" and first["pass"] == 1 and second["pass"] == 2
    assert first["messages"][-1]["role"] == "user" and "```python" in first["reply"]
    assert first["candidate_sha"] and first["reason"].endswith("rtol=1e-05")


def test_no_optimisation_passes_are_spent_when_speed_cannot_be_measured(server, make_provider):
    from tests.llm.fake_judge import FakeJudge

    class UntimedJudge(FakeJudge):
        def _time(self, source, record, profile):
            record["remarks"] = ["speed_not_measured: Triton kernels ran in the CPU interpreter"]

    server.reply(answer(CORRECT))
    ctx = context(make_provider(), judge=UntimedJudge())
    [candidate] = forge(max_optimisation_passes=3).generate(problem(), ctx)
    assert len(server.requests) == 1 and candidate.source == CORRECT
    assert candidate.provenance["optimisation_passes"] == 0
    assert "CPU interpreter" in candidate.provenance["optimisation_skipped"]
