"""Endpoint failures through the real openai client: which are retried and for how long, which stop
the run, and what the record keeps of them."""

from __future__ import annotations

import socket
import time

import pytest

from harness.llm.base import ChatConfig, EndpointUnusable, LLMError
from harness.llm.openai_provider import OpenAIProvider
from harness.llm.retry import RetryPolicy
from harness.registry import create
from tests.llm.fake_judge import CORRECT
from tests.llm.generator_support import answer, context, problem
from tests.llm.scripted_server import Scripted, completion, error

HELLO = [{"role": "user", "content": "write a kernel"}]


def test_a_retry_after_of_an_hour_is_waited_on_for_the_cap_only(server, make_provider, sleeps):
    server.push(error(429, "slow down", {"retry-after": "3600"}), error(429, "slow down", {"retry-after": "3600"}))
    server.reply("at last")
    provider = make_provider(retry=RetryPolicy(attempts=5, max_retry_after_s=30, max_total_wait_s=90))
    reply = provider.chat(HELLO, ChatConfig())
    assert reply.text == "at last" and sleeps == [30, 30]
    assert reply.retries.to_dict() == {"count": 2, "statuses": [429, 429], "wait_s": 60.0}


def test_the_waits_of_one_call_stop_at_their_total_cap(server, make_provider, sleeps):
    server.responder = lambda request: error(503, "overloaded", {"retry-after": "25"})
    provider = make_provider(retry=RetryPolicy(attempts=10, max_total_wait_s=60))
    with pytest.raises(LLMError, match="HTTP 503") as raised:
        provider.chat(HELLO, ChatConfig())
    assert sleeps == [25, 25] and len(server.requests) == 3
    assert raised.value.retries.count == 2 and raised.value.retries.statuses == (503, 503, 503)


def test_spent_quota_is_not_retried_and_stops_the_run(server, make_provider, sleeps):
    server.push(Scripted(429, {"error": {"message": "You exceeded your current quota", "type": "insufficient_quota",
                                         "code": "insufficient_quota"}}))
    with pytest.raises(EndpointUnusable, match="quota is spent"):
        make_provider().chat(HELLO, ChatConfig())
    assert len(server.requests) == 1 and sleeps == []


@pytest.mark.parametrize("status, fix", [(401, "check OPENAI_API_KEY"), (403, "may not use this model"),
                                         (404, "check --llm-model and --llm-base-url")])
def test_a_refusal_the_user_must_fix_stops_at_once_and_says_how(server, make_provider, sleeps, status, fix):
    server.push(error(status, "refused by the scripted server"))
    with pytest.raises(EndpointUnusable, match=fix) as raised:
        make_provider().chat(HELLO, ChatConfig())
    assert "refused by the scripted server" in str(raised.value) and len(server.requests) == 1 and sleeps == []


def test_a_200_carrying_an_error_keeps_the_servers_message(server, make_provider):
    server.push({"error": {"message": "upstream provider rejected the prompt: context too long", "code": 400}})
    with pytest.raises(LLMError, match="upstream provider rejected the prompt: context too long"):
        make_provider().chat(HELLO, ChatConfig())


def test_a_dead_port_is_given_up_on_in_seconds():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = OpenAIProvider(base_url=f"http://127.0.0.1:{port}/v1", model="m", log=lambda line: None)
    started = time.monotonic()
    with pytest.raises(EndpointUnusable, match="is the server running") as raised:
        provider.chat(HELLO, ChatConfig())
    assert time.monotonic() - started < 10
    assert set(raised.value.retries.statuses) == {"unreachable"} and raised.value.retries.wait_s <= 4.0


def test_a_failed_model_discovery_stops_the_run(server):
    server.models = ["model-a", "model-b"]
    provider = OpenAIProvider(base_url=server.base_url, api_key="sk", log=lambda line: None)
    with pytest.raises(EndpointUnusable, match="serves 2 models .*pass --llm-model"):
        provider.chat(HELLO, ChatConfig())
    assert server.requests == []


def test_retries_and_the_final_failure_land_in_the_candidates_provenance(server, make_provider):
    server.push(error(500, "hiccup"))
    server.reply(answer(CORRECT))
    provider = make_provider(retry=RetryPolicy(attempts=3, base_delay_s=0.5))
    [ok] = create("generator", "kforge", max_optimisation_passes=0).generate(problem(), context(provider))
    assert ok.provenance["retries"]["count"] == 1 and ok.provenance["retries"]["statuses"] == [500]
    assert "endpoint_error" not in ok.provenance

    server.responder = lambda request: error(401, "bad key")
    [failed] = create("generator", "kforge").generate(problem(), context(make_provider()))
    assert failed.source == "" and "HTTP 401" in failed.provenance["endpoint_error"]
    assert failed.provenance["endpoint_fatal"] is True


def test_one_fatal_failure_stops_the_other_parallel_samples(server, make_provider):
    server.responder = lambda request: error(401, "bad key", delay_s=0.1)
    candidates = create("generator", "direct", samples=6, parallel=2).generate(problem(), context(make_provider()))
    assert len(server.requests) <= 2  # the samples queued behind the refusal are never sent
    assert all(c.provenance.get("endpoint_fatal") for c in candidates if "endpoint_error" in c.provenance)


def test_the_builtin_fallback_notice_goes_to_the_log(monkeypatch):
    from harness.llm import NO_ENDPOINT, select_provider

    lines = []
    select_provider(log=lines.append)
    assert lines == [NO_ENDPOINT]


def test_a_provider_made_from_the_registry_takes_a_price(server):
    from harness.llm.pricing import parse_price

    provider = create("provider", "openai", base_url=server.base_url, model="test-model", price=parse_price("1,2"),
                      log=lambda line: None)
    server.push(completion("hi", prompt_tokens=1_000_000, completion_tokens=1_000_000))
    assert provider.chat(HELLO, ChatConfig()).usage.cost_usd == pytest.approx(3.0)


def test_mkevolve_records_the_endpoint_failure_that_ended_it(server, make_provider):
    from harness.judge.evaluate import EvalOptions

    server.responder = lambda request: error(401, "bad key")
    ctx = context(make_provider())
    ctx.options = EvalOptions(device="cpu", timing=False)
    [failed] = create("generator", "mkevolve").generate(problem(), ctx)
    assert "HTTP 401" in failed.provenance["endpoint_error"] and failed.provenance["endpoint_fatal"] is True


def test_the_cli_says_why_a_run_stopped_once(tmp_path):
    """An unreachable endpoint stops `python -m harness run` with exit 2 and one message that says
    what to fix and where the records are, not the same message twice."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--generator", "direct", "--problem", "L1/19_*",
                           "--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "--runs-dir", str(tmp_path)],
                          cwd=root, capture_output=True, text=True, timeout=300)
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert said.count("The run stopped here") == 1, said
    assert "is the server running" in said and "?. " not in said


def test_under_xdist_the_run_stops_with_the_endpoints_message(tmp_path):
    """With pytest-xdist, an unreachable endpoint ends the session with the message that says
    what to fix (not as a crashed worker), and the problem's failure carries it too."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "pytest", "suites/kernelbench", "-n", "2", "-p", "no:cacheprovider",
                           "--generator", "direct", "--problem", "L1/19_*", "--llm-base-url", "http://127.0.0.1:9/v1",
                           "--llm-model", "m", "--runs-dir", str(tmp_path)],
                          cwd=root, capture_output=True, text=True, timeout=300)
    said = done.stdout + done.stderr
    assert done.returncode == 2, said
    assert "keyboard-interrupt" not in said and "crashed" not in said, said
    stopped = [line for line in said.splitlines() if "Interrupted: crucible: cannot reach" in line]
    assert len(stopped) == 1 and "is the server running" in stopped[0] and "--resume" in stopped[0], said
    assert "FAILED suites/kernelbench/test_kernelbench.py::test_problem[L1/19_ReLU]" in said
