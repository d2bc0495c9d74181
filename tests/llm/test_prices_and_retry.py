"""Price table lookups and cost arithmetic; retry timing and Retry-After parsing."""

from __future__ import annotations

import json
import random

import pytest

from harness.errors import UserError
from harness.llm.base import LLMError
from harness.llm.pricing import load_prices
from harness.llm.retry import Failure, RetryPolicy, call_with_retries, retry_after_seconds
from harness.records.usage import Usage


def test_the_price_table_is_versioned_dated_and_sourced():
    table = load_prices()
    assert table.version and table.date[:4].isdigit() and table.source.startswith("https://")
    assert table.lookup("gpt-4o") is not None


def test_snapshots_and_proxy_prefixes_find_their_base_model():
    table = load_prices()
    assert table.lookup("gpt-4o-2024-08-06") == table.lookup("gpt-4o")
    assert table.lookup("gpt-4o-mini-2024-07-18") == table.lookup("gpt-4o-mini")
    assert table.lookup("openai/gpt-4.1") == table.lookup("gpt-4.1")
    assert table.lookup("GPT-4o") == table.lookup("gpt-4o")


def test_unknown_models_and_lookalikes_have_no_price():
    table = load_prices()
    assert table.lookup("gpt-4o-realtime-preview") is None
    assert table.lookup("Qwen/Qwen2.5-Coder-32B-Instruct") is None
    assert table.cost("llama3", Usage(input_tokens=10)) is None


def test_cost_bills_cached_input_at_its_own_rate():
    usage = Usage(input_tokens=3_000_000, cached_input_tokens=1_000_000, output_tokens=500_000, reasoning_tokens=200_000)
    # gpt-4.1: $2 input, $0.50 cached, $8 output per million; reasoning is inside output.
    assert load_prices().cost("gpt-4.1", usage) == pytest.approx(2 * 2.0 + 1 * 0.5 + 0.5 * 8.0)


def test_a_user_price_file_extends_the_table(tmp_path, monkeypatch):
    extra = tmp_path / "prices.json"
    extra.write_text(json.dumps({"version": "lab-2025", "models": {"my-qwen": {"input": 0.1, "output": 0.2}}}))
    monkeypatch.setenv("CRUCIBLE_PRICES", str(extra))
    table = load_prices()
    assert table.version.endswith("+lab-2025")
    assert table.cost("my-qwen", Usage(input_tokens=1_000_000, output_tokens=1_000_000)) == pytest.approx(0.3)
    assert table.lookup("gpt-4o") is not None


def test_a_bad_price_file_is_a_user_error(tmp_path, monkeypatch):
    extra = tmp_path / "prices.json"
    extra.write_text(json.dumps({"models": {"x": {"input": "cheap"}}}))
    monkeypatch.setenv("CRUCIBLE_PRICES", str(extra))
    with pytest.raises(UserError, match="needs numeric 'input' and 'output'"):
        load_prices()
    monkeypatch.setenv("CRUCIBLE_PRICES", str(tmp_path / "missing.json"))
    with pytest.raises(UserError, match="cannot be read"):
        load_prices()


def test_backoff_doubles_with_jitter_and_is_capped():
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=5.0)
    rng = random.Random(0)
    delays = [policy.delay(failures, None, rng) for failures in (1, 2, 3, 4, 5)]
    for delay, full in zip(delays, (1, 2, 4, 5, 5)):
        assert full / 2 <= delay <= full


def test_retry_after_is_honoured_up_to_a_cap():
    policy = RetryPolicy(max_retry_after_s=60)
    assert policy.delay(1, 12.0, random.Random()) == 12.0
    assert policy.delay(1, 3600.0, random.Random()) == 60.0


def test_retry_after_parses_seconds_milliseconds_and_dates():
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "1500"}) == 1.5
    assert retry_after_seconds({"retry-after": "Wed, 21 Oct 2015 07:28:30 GMT"}, now=1445412500.0) == 10.0
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_unrecognised_exceptions_are_bugs_and_propagate_untouched():
    def broken():
        raise KeyError("bug")

    with pytest.raises(KeyError):
        call_with_retries(broken, lambda error: None, RetryPolicy(), sleep=lambda s: None)


def test_non_retryable_failures_are_not_retried():
    calls = []

    def refused():
        calls.append(1)
        raise ValueError("400")

    with pytest.raises(LLMError, match="bad request"):
        call_with_retries(refused, lambda error: Failure(False, "bad request"), RetryPolicy(), sleep=lambda s: None)
    assert len(calls) == 1
