"""Which provider a run gets, and that the terminal says so when it is the builtin writer."""

from __future__ import annotations

import pytest

from harness import registry
from harness.llm import ChatConfig, select_provider
from harness.llm.base import Reply
from harness.llm.openai_provider import OpenAIProvider
from harness.registry import create
from harness.records.usage import Usage
from tests.llm.fake_judge import CORRECT
from tests.llm.generator_support import answer, context, problem


class StandInBuiltin:
    """Registered as ``builtin`` for these tests, so they do not depend on the rule-based writer."""

    name = "builtin"

    def chat(self, messages, config):
        return Reply(text=answer(CORRECT), usage=Usage(calls=1), provider="builtin", model="rules")


@pytest.fixture
def stand_in_builtin(monkeypatch):
    registry.names("provider")  # load the real registrations first, so ours is not overwritten
    monkeypatch.setitem(registry._entries["provider"], "builtin", StandInBuiltin)


def test_the_registry_knows_openai_and_replay():
    assert {"openai", "replay"} <= set(registry.names("provider"))


def test_no_endpoint_means_builtin_and_the_terminal_says_it_is_not_a_model(stand_in_builtin):
    lines = []
    provider = select_provider(log=lines.append)
    assert provider.name == "builtin"
    assert len(lines) == 1 and "no LLM endpoint is configured" in lines[0] and "NOT a language model" in lines[0]


def test_a_base_url_in_the_environment_selects_openai(monkeypatch, server):
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    provider = select_provider(model="m", log=lambda line: None)
    assert isinstance(provider, OpenAIProvider) and provider.base_url == server.base_url


def test_an_api_key_alone_selects_openai_at_its_default_url(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    provider = select_provider(model="gpt-4o", log=lambda line: None)
    assert provider.name == "openai" and provider.base_url == "https://api.openai.com/v1"


def test_an_explicit_base_url_selects_openai(server):
    provider = select_provider(base_url=server.base_url, model="m", log=lambda line: None)
    assert provider.name == "openai" and provider.base_url == server.base_url


def test_an_explicit_name_wins_over_the_environment(monkeypatch, stand_in_builtin):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    lines = []
    assert select_provider("builtin", log=lines.append).name == "builtin"
    assert lines == []


def test_an_llm_generator_without_endpoint_or_provider_uses_builtin_and_says_so(stand_in_builtin):
    lines = []
    ctx = context(None)
    ctx.log = lines.append
    [candidate] = create("generator", "direct").generate(problem(), ctx)
    assert candidate.provider == "builtin" and candidate.source == CORRECT
    assert any("NOT a language model" in line for line in lines)


def test_generator_options_choose_the_endpoint_over_the_harness_provider(server):
    server.reply(answer(CORRECT))
    harness_provider = StandInBuiltin()
    generator = create("generator", "direct", llm_base_url=server.base_url, llm_model="my-model")
    [candidate] = generator.generate(problem(), context(harness_provider))
    assert candidate.provider == "openai" and server.requests[0]["model"] == "my-model"


def test_the_response_cache_defaults_to_the_folder_in_the_environment(server, tmp_path):
    server.reply("cached once")
    provider = create("provider", "openai", base_url=server.base_url, model="test-model", log=lambda line: None)
    assert provider.cache is not None and provider.cache.folder == tmp_path / "llm-cache"
    provider.chat([{"role": "user", "content": "hi"}], ChatConfig())
    assert any((tmp_path / "llm-cache").rglob("*.json"))
