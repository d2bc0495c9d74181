"""The chat protocol every LLM provider speaks: a config, a reply, one method, and its errors.

Messages are OpenAI-style dicts ``{"role": "system"|"user"|"assistant", "content": str}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from harness.errors import UserError
from harness.records.usage import Usage


@dataclass(frozen=True)
class ChatConfig:
    """How to sample one reply. ``model`` empty means the provider's default model."""

    model: str = ""
    temperature: float = 0.0
    max_tokens: int | None = None
    seed: int | None = None
    timeout_s: float = 120.0


@dataclass(frozen=True)
class Retries:
    """The failed tries before an answer (or before giving up): how many, which statuses, how long waited."""

    count: int = 0
    statuses: tuple = ()
    wait_s: float = 0.0

    def __add__(self, other: "Retries") -> "Retries":
        return Retries(self.count + other.count, self.statuses + other.statuses, self.wait_s + other.wait_s)

    def to_dict(self) -> dict:
        return {"count": self.count, "statuses": list(self.statuses), "wait_s": round(self.wait_s, 3)}


@dataclass
class Reply:
    """One assistant message and what producing it was billed.

    A reply served from the response cache is ``cached``: its ``usage`` is zero (nothing was sent)
    and ``original_usage`` keeps what the endpoint billed when it first produced it."""

    text: str
    usage: Usage
    provider: str
    model: str
    finish_reason: str | None = None
    cached: bool = False
    original_usage: Usage | None = None
    retries: Retries = field(default_factory=Retries)


@runtime_checkable
class Provider(Protocol):
    name: str

    def chat(self, messages: list[dict], config: ChatConfig) -> Reply: ...


class LLMError(Exception):
    """The endpoint failed after retries (or refused the request); the message says what and why.
    ``retries`` holds the failed tries that came before."""

    retries: Retries = Retries()


class EndpointUnusable(LLMError, UserError):
    """The endpoint cannot serve this run at all (key refused, model missing, server unreachable,
    quota spent, no price for a cost limit): the run stops, and the message says what to fix."""


class BudgetExceeded(LLMError):
    """A token or cost limit stopped generation; ``reason`` is the verdict text."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason
