"""The chat protocol every LLM provider speaks: a config, a reply, one method, one error type.

Messages are OpenAI-style dicts ``{"role": "system"|"user"|"assistant", "content": str}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from harness.usage import Usage


@dataclass(frozen=True)
class ChatConfig:
    """How to sample one reply. ``model`` empty means the provider's default model."""

    model: str = ""
    temperature: float = 0.0
    max_tokens: int | None = None
    seed: int | None = None
    timeout_s: float = 120.0


@dataclass
class Reply:
    """One assistant message and what producing it consumed."""

    text: str
    usage: Usage
    provider: str
    model: str
    finish_reason: str | None = None
    cached: bool = False


@runtime_checkable
class Provider(Protocol):
    name: str

    def chat(self, messages: list[dict], config: ChatConfig) -> Reply: ...


class LLMError(Exception):
    """The endpoint failed after retries (or refused outright); the message says what and why."""


class BudgetExceeded(LLMError):
    """A token or cost limit stopped generation; ``reason`` is the verdict text."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason
