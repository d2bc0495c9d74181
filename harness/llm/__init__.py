"""Crucible's LLM layer: a small chat protocol (``base``), providers behind the registry
(``providers``: openai, replay, builtin), prompts, code extraction, prices and usage accounting.

Nothing heavy is imported here: the ``openai`` package is loaded by the openai provider only.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from harness.llm.base import BudgetExceeded, ChatConfig, LLMError, Provider, Reply

__all__ = ["BudgetExceeded", "ChatConfig", "LLMError", "Provider", "Reply", "endpoint_configured", "select_provider"]

NO_ENDPOINT = (
    "crucible: no LLM endpoint is configured (OPENAI_BASE_URL and OPENAI_API_KEY are unset, no --llm-base-url); "
    "using the builtin provider, a rule-based kernel writer that is NOT a language model. "
    "Point OPENAI_BASE_URL / OPENAI_API_KEY at an OpenAI-compatible endpoint to evaluate a model."
)


def endpoint_configured(base_url: str | None = None) -> bool:
    return bool(base_url or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_KEY"))


def select_provider(
    name: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    log: Callable[[str], None] = print,
    **options: Any,
) -> Provider:
    """The provider to use: ``name`` when given; else ``openai`` when an endpoint is configured;
    else ``builtin``, saying so on the terminal (``log``)."""
    from harness.registry import create

    if name is None:
        name = "openai" if endpoint_configured(base_url) else "builtin"
        if name == "builtin":
            log(NO_ENDPOINT)
    if name == "builtin":
        return create("provider", "builtin")
    return create("provider", name, model=model, base_url=base_url, log=log, **options)
