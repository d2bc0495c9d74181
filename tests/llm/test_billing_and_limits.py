"""What a run is billed and when it stops: independent samples, reserved budgets, priced limits."""

from __future__ import annotations

import argparse

import pytest

from harness.candidate import Budget
from harness.errors import UserError
from harness.llm import tokens
from harness.llm.base import EndpointUnusable
from harness.registry import create
from harness.records.usage import Usage, total
from tests.llm.fake_judge import CORRECT
from tests.llm.generator_support import answer, context, problem
from tests.llm.scripted_server import Scripted, completion

REPLY = answer(CORRECT)


def counted(request: dict, delay_s: float = 0.0) -> Scripted:
    """Usage as a server reports it: the prompt's tokens, and the reply's."""
    body = completion(REPLY, prompt_tokens=tokens.count_messages(request["messages"]),
                      completion_tokens=tokens.count_text(REPLY))
    return Scripted(body=body, delay_s=delay_s)


def openai_with_cache(server, tmp_path):
    return create("provider", "openai", base_url=server.base_url, model="test-model", cache_dir=tmp_path / "cache",
                  log=lambda line: None)


def test_k_samples_at_a_temperature_are_k_requests_every_time(server, tmp_path):
    server.responder = counted
    provider = openai_with_cache(server, tmp_path)
    for _ in range(2):  # a rerun too: sampled replies never come from the cache
        candidates = create("generator", "direct", samples=4, temperature=0.8).generate(problem(), context(provider))
        assert [c.provenance["cached"] for c in candidates] == [False] * 4
    assert len(server.requests) == 8 and {r["temperature"] for r in server.requests} == {0.8}
    assert server.billed["calls"] == 8
    print(f"\nSCENARIO | direct 4 samples at 0.8, run twice, cache on | server {server.billed} | "
          f"records 8 calls, none cached | 8 requests")


def test_greedy_reruns_are_served_from_the_cache_and_billed_nothing(server, tmp_path):
    server.responder = counted
    provider = openai_with_cache(server, tmp_path)
    first = create("generator", "direct").generate(problem(), context(provider))
    again = create("generator", "direct").generate(problem(), context(provider))
    assert len(server.requests) == 1 and again[0].provenance["cached"] is True
    assert again[0].usage == Usage() and total(c.usage for c in first + again).input_tokens == server.billed["prompt_tokens"]
    assert again[0].transcript[0]["original_usage"] == first[0].usage.to_dict()


@pytest.mark.parametrize("limit_replies", [3.5, 6.2])
def test_parallel_samples_stay_within_one_reply_of_the_token_limit(server, make_provider, limit_replies):
    server.responder = lambda request: counted(request, delay_s=0.2)
    one_reply = tokens.count_messages(create_messages()) + tokens.count_text(REPLY)
    limit = int(limit_replies * one_reply)
    candidates = create("generator", "direct", samples=12, parallel=4).generate(
        problem(), context(make_provider(), Budget(max_tokens=limit)))
    spent = total(c.usage for c in candidates).total_tokens
    assert spent == server.billed["prompt_tokens"] + server.billed["completion_tokens"]
    assert spent <= limit + one_reply and spent > limit - 2 * one_reply
    assert server.max_in_flight >= 2  # the samples did go out in parallel
    assert "budget" in candidates[0].provenance["stopped"]
    print(f"\nSCENARIO | direct 12 samples, 4 in parallel, --max-tokens {limit} (one reply {one_reply}) | "
          f"server {server.billed} | records {len(candidates)} calls, {spent} tokens | "
          f"{server.max_in_flight} in flight at most, {spent - limit:+d} tokens against the limit")


def create_messages():
    from harness.llm.prompts import generation_messages
    from tests.llm.generator_support import FACTS

    return generation_messages(problem().source, "triton", FACTS, "fp32")


def test_a_run_budget_is_reserved_too(server, make_provider):
    server.responder = lambda request: counted(request, delay_s=0.2)
    one_reply = tokens.count_messages(create_messages()) + tokens.count_text(REPLY)
    ctx = context(make_provider(), run_budget=Budget(max_tokens=3 * one_reply), run_usage=Usage(input_tokens=one_reply))
    candidates = create("generator", "direct", samples=8, parallel=4).generate(problem(), ctx)
    assert total(c.usage for c in candidates).total_tokens + one_reply <= 4 * one_reply
    assert candidates[0].provenance["stopped"].startswith("run token budget")


def test_an_unpriced_model_with_a_cost_limit_is_refused_before_any_call(server):
    ctx = context(None, Budget(max_cost_usd=0.01))
    generator = create("generator", "direct", provider="openai", llm_base_url=server.base_url, llm_model="test-model")
    with pytest.raises(EndpointUnusable, match="no price in the price table.*--llm-price"):
        generator.generate(problem(), ctx)
    assert server.requests == []


def test_a_given_price_makes_the_cost_limit_hold(server):
    server.responder = counted
    ctx = context(None, Budget(max_cost_usd=0.002))
    generator = create("generator", "direct", samples=6, parallel=1, provider="openai", llm_base_url=server.base_url,
                       llm_model="test-model", llm_price="1.0,2.0")
    candidates = generator.generate(problem(), ctx)
    cost = total(c.usage for c in candidates).cost_usd
    assert 0 < cost <= 0.002 and len(candidates) < 6
    assert "cost budget" in candidates[0].provenance["stopped"]


def test_a_bad_price_is_refused_with_the_format():
    with pytest.raises(UserError, match="INPUT,OUTPUT"):
        create("generator", "direct", llm_price="cheap")


def test_the_cost_message_shows_digits_that_differ():
    reason = Budget(max_cost_usd=0.0003).exceeded_by(Usage(cost_usd=0.00030004))
    assert reason == "cost budget spent: $0.00030004 > $0.00030000"


def test_kforge_sends_a_reply_without_code_back_so_its_prompts_move_on(server, make_provider):
    for note in ("I would fuse the two ops.", "Use a block size of 128.", "Still thinking."):
        server.reply(note)
    [candidate] = create("generator", "kforge", max_functional_passes=3).generate(problem(), context(make_provider()))
    prompts = [str(request["messages"]) for request in server.requests]
    assert len(prompts) == 3 and len(set(prompts)) == 3
    assert server.requests[1]["messages"][-2] == {"role": "assistant", "content": "I would fuse the two ops."}
    assert candidate.provenance["no_code"]


def test_zero_optimisation_passes_is_accepted_on_the_command_line():
    from harness.options import add_options, generator_kwargs, run_options

    parser = argparse.ArgumentParser()
    add_options(parser.add_argument, run_options())
    args = parser.parse_args(["--max-optimisation-passes", "0", "--llm-price", "0.2,0.6"])
    assert generator_kwargs("kforge", lambda dest: getattr(args, dest)) == {"max_optimisation_passes": 0,
                                                                           "llm_price": "0.2,0.6"}
    with pytest.raises(SystemExit):
        parser.parse_args(["--max-optimisation-passes", "-1"])
