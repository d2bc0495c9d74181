"""LLM providers in the registry: ``openai`` and ``replay`` here, ``builtin`` from its own package.

Factories import their SDKs lazily, so ``import harness`` and the registry work without openai.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from harness.registry import register

_DEFAULT = object()


def _concurrency() -> int:
    value = os.environ.get("CRUCIBLE_LLM_CONCURRENCY", "8")
    try:
        return max(1, int(value))
    except ValueError:
        from harness.errors import UserError

        raise UserError(f"CRUCIBLE_LLM_CONCURRENCY={value!r} is not a whole number; set it to e.g. 8") from None


def _common(options: dict[str, Any]) -> dict[str, Any]:
    options.setdefault("max_concurrency", _concurrency())
    return {key: value for key, value in options.items() if value is not None}


@register("provider", "openai")
def openai_provider(cache_dir: Any = _DEFAULT, log: Callable[[str], None] = print, **options: Any):
    """Any OpenAI-compatible endpoint; options: model, base_url, api_key, max_concurrency, retry."""
    from harness.llm.cache import ResponseCache, default_cache_dir
    from harness.llm.openai_provider import OpenAIProvider

    folder = default_cache_dir() if cache_dir is _DEFAULT else cache_dir
    cache = ResponseCache(folder) if folder else None
    return OpenAIProvider(cache=cache, log=log, **_common(options))


@register("provider", "replay")
def replay_provider(cassette: Any = None, mode: str | None = None, log: Callable[[str], None] = print,
                    cache_dir: Any = None, **options: Any):
    """Record to / replay from a cassette; options as openai's plus cassette and mode (replay|record)."""
    from harness.llm.replay import ReplayProvider

    cassette = cassette or os.environ.get("CRUCIBLE_CASSETTE")
    mode = mode or os.environ.get("CRUCIBLE_REPLAY_MODE") or "replay"
    return ReplayProvider(cassette=cassette, mode=mode, log=log, **_common(options))

