"""The openai provider through the real openai client against a scripted server on loopback."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from harness.errors import UserError
from harness.llm.base import ChatConfig, LLMError
from harness.llm.cache import ResponseCache
from harness.llm.openai_provider import sampling_args
from harness.llm.pricing import load_prices
from harness.records.usage import Usage, total
from tests.llm.scripted_server import Scripted, completion, error

HELLO = [{"role": "user", "content": "write a kernel"}]


def test_reply_carries_text_and_exactly_the_usage_the_server_reported(server, make_provider):
    server.reply("done", prompt_tokens=1234, completion_tokens=567, cached_tokens=200, reasoning_tokens=89,
                 model="gpt-4o-mini-2024-07-18")
    reply = make_provider().chat(HELLO, ChatConfig())
    assert reply.text == "done"
    assert reply.model == "gpt-4o-mini-2024-07-18" and reply.provider == "openai"
    assert reply.finish_reason == "stop" and reply.cached is False
    usage = reply.usage
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens, usage.reasoning_tokens) == (1234, 200, 567, 89)
    assert usage.calls == 1 and usage.estimated is False


def test_cost_comes_from_the_price_table(server, make_provider):
    server.reply("done", prompt_tokens=1_000_000, completion_tokens=1_000_000, cached_tokens=400_000)
    usage = make_provider(model="gpt-4o-mini").chat(HELLO, ChatConfig()).usage
    price = load_prices().lookup("gpt-4o-mini")
    assert (price.input, price.cached_input, price.output) == (0.15, 0.075, 0.60)
    assert usage.cost_usd == pytest.approx(0.6 * 0.15 + 0.4 * 0.075 + 1.0 * 0.60)


def test_unpriced_model_costs_nothing_and_is_reported_once(server, make_provider):
    lines = []
    server.reply("a")
    server.reply("b")
    provider = make_provider(model="my-local-qwen", log=lines.append)
    assert provider.chat(HELLO, ChatConfig(seed=1)).usage.cost_usd == 0.0
    provider.chat(HELLO, ChatConfig(seed=2))
    assert len([line for line in lines if "no price for model 'my-local-qwen'" in line]) == 1


def test_usage_over_many_calls_adds_up_to_the_server_totals(server, make_provider):
    reported = [(100, 10), (250, 40), (75, 300)]
    for prompt, output in reported:
        server.reply("x", prompt_tokens=prompt, completion_tokens=output)
    provider = make_provider()
    usages = [provider.chat(HELLO, ChatConfig(seed=i)).usage for i in range(3)]
    summed = total(usages)
    assert summed.input_tokens == sum(p for p, _ in reported)
    assert summed.output_tokens == sum(o for _, o in reported)
    assert summed.calls == 3


def test_request_carries_model_messages_and_generation_config(server, make_provider):
    server.reply("ok")
    make_provider(model="gpt-4.1").chat(HELLO, ChatConfig(temperature=0.7, max_tokens=321, seed=9))
    body = server.requests[0]
    assert body["model"] == "gpt-4.1" and body["messages"] == HELLO
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.7, 321, 9)
    assert server.headers[0]["authorization"] == "Bearer sk-test-secret"


def test_reasoning_models_get_max_completion_tokens_and_no_temperature():
    args = sampling_args("o4-mini", ChatConfig(temperature=0.0, max_tokens=100))
    assert args == {"max_completion_tokens": 100}
    assert sampling_args("gpt-4o", ChatConfig(max_tokens=100)) == {"temperature": 0.0, "max_tokens": 100}


def test_missing_usage_is_estimated_with_a_tokenizer_and_marked(server, make_provider):
    server.push(completion("def f():\n    return 1\n" * 10, usage=False))
    usage = make_provider().chat(HELLO, ChatConfig()).usage
    assert usage.estimated is True
    assert usage.input_tokens > 0 and usage.output_tokens > 0


def test_a_500_is_retried_with_backoff(server, make_provider, sleeps):
    server.push(error(500), error(503))
    server.reply("recovered")
    reply = make_provider().chat(HELLO, ChatConfig())
    assert reply.text == "recovered" and len(server.requests) == 3
    assert len(sleeps) == 2
    assert 0.25 <= sleeps[0] <= 0.5 and 0.5 <= sleeps[1] <= 1.0  # 0.5 s doubled, jittered in [0.5, 1]


def test_a_429_waits_as_long_as_retry_after_says(server, make_provider, sleeps):
    server.push(error(429, "slow down", headers={"retry-after": "7"}))
    server.reply("ok")
    assert make_provider().chat(HELLO, ChatConfig()).text == "ok"
    assert sleeps == [7.0]


def test_retry_after_ms_takes_precedence(server, make_provider, sleeps):
    server.push(error(429, headers={"retry-after-ms": "250", "retry-after": "9"}))
    server.reply("ok")
    make_provider().chat(HELLO, ChatConfig())
    assert sleeps == [0.25]


def test_a_reply_slower_than_the_timeout_is_retried(server, make_provider, sleeps):
    server.push(Scripted(body=completion("too late"), delay_s=1.5))
    server.reply("in time")
    reply = make_provider().chat(HELLO, ChatConfig(timeout_s=0.3))
    assert reply.text == "in time"
    assert len(server.requests) == 2 and len(sleeps) == 1


def test_persistent_failure_becomes_an_llm_error_naming_the_cause(server, make_provider):
    server.push(error(500, "the GPU caught fire"), error(500, "the GPU caught fire"), error(500, "the GPU caught fire"))
    with pytest.raises(LLMError, match=r"HTTP 500.*the GPU caught fire.*gave up after 3 attempts"):
        make_provider().chat(HELLO, ChatConfig())
    assert len(server.requests) == 3


def test_a_refused_key_stops_at_once_with_the_fix(server, make_provider):
    server.push(error(401, "invalid api key"))
    with pytest.raises(UserError, match="OPENAI_API_KEY"):
        make_provider().chat(HELLO, ChatConfig())
    assert len(server.requests) == 1


def test_an_unreachable_endpoint_is_an_llm_error(sleeps):
    from harness.llm.openai_provider import OpenAIProvider
    from harness.llm.retry import RetryPolicy

    provider = OpenAIProvider(model="m", base_url="http://127.0.0.1:9/v1", api_key="k", sleep=sleeps,
                              retry=RetryPolicy(attempts=2, base_delay_s=0.01), log=lambda line: None)
    with pytest.raises(LLMError, match="cannot reach http://127.0.0.1:9/v1"):
        provider.chat(HELLO, ChatConfig(timeout_s=5))


def test_the_one_model_a_local_server_serves_is_used_when_none_is_named(server, make_provider):
    server.models = ["Qwen/Qwen2.5-Coder-7B-Instruct"]
    server.reply("ok")
    make_provider(model=None).chat(HELLO, ChatConfig())
    assert server.requests[0]["model"] == "Qwen/Qwen2.5-Coder-7B-Instruct"


def test_no_model_and_several_served_asks_for_llm_model(server, make_provider):
    server.models = ["a", "b"]
    with pytest.raises(UserError, match=r"serves 2 models \(a, b\).*--llm-model"):
        make_provider(model=None).chat(HELLO, ChatConfig())


def test_the_default_openai_url_without_a_key_says_what_to_set():
    from harness.llm.openai_provider import OpenAIProvider

    with pytest.raises(UserError, match="OPENAI_API_KEY is not set"):
        OpenAIProvider(model="gpt-4o")


def test_concurrent_requests_never_exceed_the_limit(server, make_provider):
    provider = make_provider(max_concurrency=2)
    server.responder = lambda request: Scripted(body=completion("ok"), delay_s=0.15)
    threads = [threading.Thread(target=provider.chat, args=(HELLO, ChatConfig(seed=i))) for i in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(server.requests) == 6
    assert server.max_in_flight == 2


def test_a_cache_hit_is_billed_nothing_and_keeps_its_original_usage_apart(server, make_provider, tmp_path):
    server.models = ["gpt-4o-mini"]
    server.reply("first", prompt_tokens=10, completion_tokens=5)
    provider = make_provider(cache=ResponseCache(tmp_path / "cache"))
    first = provider.chat(HELLO, ChatConfig())
    second = provider.chat(HELLO, ChatConfig())
    assert len(server.requests) == 1
    assert second.cached is True and second.text == "first"
    assert second.usage == Usage() and second.original_usage == first.usage


def test_the_cache_key_includes_model_and_config(server, make_provider, tmp_path):
    server.models = ["gpt-4o-mini", "gpt-4o"]
    for text in ("a", "b", "c"):
        server.reply(text)
    provider = make_provider(cache=ResponseCache(tmp_path / "cache"))
    provider.chat(HELLO, ChatConfig())
    provider.chat(HELLO, ChatConfig(model="gpt-4o"))
    provider.chat(HELLO, ChatConfig(max_tokens=10))
    assert len(server.requests) == 3


def test_another_checkpoint_under_the_same_name_misses_the_cache(server, make_provider, tmp_path):
    server.models = [{"id": "gpt-4o-mini", "root": "/ckpt/step-1000"}]
    server.reply("old weights")
    server.reply("new weights")
    make_provider(cache=ResponseCache(tmp_path / "cache")).chat(HELLO, ChatConfig())
    server.models = [{"id": "gpt-4o-mini", "root": "/ckpt/step-2000"}]  # the server restarted on other weights
    assert make_provider(cache=ResponseCache(tmp_path / "cache")).chat(HELLO, ChatConfig()).text == "new weights"


def test_a_model_the_endpoint_does_not_list_is_never_cached(server, make_provider, tmp_path):
    server.reply("a")
    server.reply("b")
    provider = make_provider(model="unlisted", cache=ResponseCache(tmp_path / "cache"))
    assert [provider.chat(HELLO, ChatConfig()).text for _ in range(2)] == ["a", "b"]


def test_sampled_requests_are_never_cached_even_with_a_seed(server, make_provider, tmp_path):
    server.models = ["gpt-4o-mini"]
    server.reply("a")
    server.reply("b")
    provider = make_provider(cache=ResponseCache(tmp_path / "cache"))
    texts = [provider.chat(HELLO, ChatConfig(temperature=0.8, seed=0)).text for _ in range(2)]
    assert texts == ["a", "b"]


def test_harness_imports_without_openai():
    code = ("import sys; sys.modules['openai'] = None\n"
            "import harness, harness.llm, harness.llm.providers\n"
            "from harness.registry import names, create\n"
            "assert 'openai' in names('provider')\n"
            "try:\n    create('provider', 'openai', model='m', base_url='http://x/v1')\n"
            "except Exception as e:\n    print(type(e).__name__, e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "UserError" in out.stdout and "pip install openai" in out.stdout


def test_usage_value_type_is_what_the_records_hold():
    assert Usage.from_dict(Usage(input_tokens=3, cost_usd=0.5).to_dict()) == Usage(input_tokens=3, cost_usd=0.5)
