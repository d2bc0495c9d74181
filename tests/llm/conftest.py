"""Fixtures for the LLM layer's tests: a scripted OpenAI-compatible server on loopback and a
provider that talks to it through the real openai client, with instant, recorded back-off."""

from __future__ import annotations

import pytest

pytest.importorskip("openai")

from harness.llm.openai_provider import OpenAIProvider  # noqa: E402
from harness.llm.retry import RetryPolicy  # noqa: E402
from tests.llm.scripted_server import ScriptedServer  # noqa: E402


@pytest.fixture(autouse=True)
def no_endpoint_in_environment(monkeypatch, tmp_path):
    """Tests never see the developer's endpoint, key or price overrides, and never write a cache
    outside their temporary folder."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "CRUCIBLE_PRICES", "CRUCIBLE_CASSETTE", "CRUCIBLE_REPLAY_MODE",
                 "CRUCIBLE_LLM_MODEL", "CRUCIBLE_LLM_CONCURRENCY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CRUCIBLE_LLM_CACHE", str(tmp_path / "llm-cache"))


@pytest.fixture
def server():
    scripted = ScriptedServer().start()
    yield scripted
    scripted.stop()


class SleepRecorder(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps():
    return SleepRecorder()


@pytest.fixture
def make_provider(server, sleeps):
    """An OpenAIProvider on the scripted server: back-off waits are recorded, not slept."""

    def make(**options) -> OpenAIProvider:
        options.setdefault("model", "gpt-4o-mini")
        options.setdefault("retry", RetryPolicy(attempts=3, base_delay_s=0.5))
        options.setdefault("log", lambda line: None)
        return OpenAIProvider(base_url=server.base_url, api_key="sk-test-secret", sleep=sleeps, **options)

    return make
