"""The direct generator: k samples, each a candidate, with usage and budgets honoured."""

from __future__ import annotations

import pytest

from harness.candidate import Budget
from harness.errors import UserError
from harness.llm.retry import RetryPolicy
from harness.registry import create
from harness.records.usage import Usage, total
from tests.llm.fake_judge import CORRECT, WRONG
from tests.llm.generator_support import answer, context, problem
from tests.llm.scripted_server import completion, error


def by_seed(request):
    """A scripted model whose answer and usage depend on the sample's seed."""
    seed = request["seed"]
    source = CORRECT if seed % 2 == 0 else WRONG
    return completion(answer(source), prompt_tokens=1000 + seed, completion_tokens=200 + seed)


def test_k_samples_become_k_candidates_with_their_own_usage(server, make_provider):
    server.responder = by_seed
    candidates = create("generator", "direct", samples=3).generate(problem(), context(make_provider()))
    assert [c.provenance["sample"] for c in candidates] == [0, 1, 2]
    assert all(c.provenance["k"] == 3 for c in candidates)
    assert [c.source for c in candidates] == [CORRECT, WRONG, CORRECT]
    assert [(c.usage.input_tokens, c.usage.output_tokens) for c in candidates] == [(1000, 200), (1001, 201), (1002, 202)]
    assert all(c.provider == "openai" and c.model == "test-model" for c in candidates)
    assert all(len(c.transcript) == 1 and c.transcript[0]["verdict"] == "ok" for c in candidates)


def test_samples_differ_by_seed_and_sample_at_a_temperature(server, make_provider):
    server.responder = by_seed
    create("generator", "direct", samples=3).generate(problem(), context(make_provider()))
    assert sorted(r["seed"] for r in server.requests) == [0, 1, 2]
    assert {r["temperature"] for r in server.requests} == {0.7}
    server.requests.clear()
    create("generator", "direct", samples=1).generate(problem(), context(make_provider()))
    assert server.requests[0]["temperature"] == 0.0


def test_the_prompt_carries_the_problem_and_the_device(server, make_provider):
    server.responder = by_seed
    create("generator", "direct").generate(problem(), context(make_provider()))
    system, user = server.requests[0]["messages"]
    assert "NVIDIA H200" in system["content"] and "Triton" in system["content"]
    assert "class Model(nn.Module)" in user["content"]


def test_usage_totals_equal_what_the_server_reported(server, make_provider):
    server.responder = by_seed
    candidates = create("generator", "direct", samples=4).generate(problem(), context(make_provider()))
    summed = total(c.usage for c in candidates)
    assert (summed.input_tokens, summed.output_tokens, summed.calls) == (4006, 806, 4)


def test_a_reply_without_code_is_an_empty_candidate_with_a_reason(server, make_provider):
    server.reply("I would use shared memory tiling here.")
    [candidate] = create("generator", "direct").generate(problem(), context(make_provider()))
    assert candidate.source == ""
    assert "no ```python code block" in candidate.provenance["no_code"]
    assert candidate.transcript[0]["verdict"] == "no_code"


def test_max_cost_stops_sampling_cleanly(server, make_provider):
    # gpt-4o-mini: 10_000 input + 2_000 output tokens = $0.0027 per reply.
    server.responder = lambda request: completion(answer(CORRECT), prompt_tokens=10_000, completion_tokens=2_000)
    generator = create("generator", "direct", samples=5, parallel=1)
    candidates = generator.generate(problem(), context(make_provider(), Budget(max_cost_usd=0.005)))
    assert len(server.requests) == 2  # $0.0027 is under the limit, $0.0054 is over: no third call
    assert len(candidates) == 2
    assert all(c.provenance["stopped"].startswith("cost budget spent: $0.0054 > $0.0050") for c in candidates)
    assert total(c.usage for c in candidates).cost_usd == pytest.approx(0.0054)


def test_max_tokens_stops_sampling_cleanly(server, make_provider):
    server.responder = lambda request: completion(answer(CORRECT), prompt_tokens=100, completion_tokens=50)
    candidates = create("generator", "direct", samples=4, parallel=1).generate(
        problem(), context(make_provider(), Budget(max_tokens=250)))
    # After one reply (150 tokens) the next call's expected size no longer fits, so it is not sent.
    assert len(candidates) == 1 and len(server.requests) == 1
    assert candidates[0].provenance["stopped"].startswith("token budget would be passed: ")
    assert "if the next call" in candidates[0].provenance["stopped"]


def test_a_spent_run_budget_yields_an_empty_candidate_saying_why(server, make_provider):
    ctx = context(make_provider(), run_budget=Budget(max_cost_usd=1.0), run_usage=Usage(cost_usd=1.5))
    [candidate] = create("generator", "direct", samples=2).generate(problem(), ctx)
    assert candidate.source == "" and candidate.provenance["stopped"].startswith("run cost budget spent")
    assert server.requests == []


def test_an_endpoint_that_keeps_failing_stops_with_the_error(server, make_provider):
    server.responder = lambda request: error(500, "overloaded")
    provider = make_provider(retry=RetryPolicy(attempts=2, base_delay_s=0.0))
    [candidate] = create("generator", "direct").generate(problem(), context(provider))
    assert candidate.source == "" and "llm error" in candidate.provenance["stopped"]
    assert "overloaded" in candidate.provenance["stopped"]


@pytest.mark.parametrize("options, message", [
    ({"samples": 0}, "samples=0 must be a whole number >= 1"),
    ({"samples": "many"}, "samples='many' is not a whole number"),
    ({"backend": "rocm"}, "backend 'rocm'"),
    ({"temperature": -1}, "temperature -1"),
    ({"beam_width": 4}, "has no option(s) beam_width"),
])
def test_bad_options_are_user_errors(options, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        create("generator", "direct", **options)


def test_spending_so_far_is_summed_from_result_records():
    from harness.llm.session import spent

    records = [{"usage": {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.25}}, {"usage": None},
               {"usage": {"input_tokens": 1, "cost_usd": 0.5, "estimated": True}}]
    assert spent(records) == Usage(input_tokens=11, output_tokens=5, cost_usd=0.75, estimated=True)
