"""A response cache on disk, keyed on provider, endpoint, the served model's identity, generation
config and messages.

Only greedy requests (temperature 0) are cached: a sampled reply is meant to differ from the
next, whatever its seed, and caching it would silently turn k samples into one. The model's
identity is what the endpoint's ``/models`` listing says about it (for vLLM, the checkpoint it
was loaded from), so re-serving another checkpoint under the same name misses the cache; an
endpoint that cannot tell is not cached at all. A hit is billed nothing (no request was sent):
its usage is zero and the usage first billed for it is kept apart as ``original_usage``.
Set ``CRUCIBLE_LLM_CACHE=off`` to disable it, or to a folder to move it (default
``.crucible-cache/llm`` in the working directory).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from harness.llm.base import ChatConfig, Reply
from harness.records.usage import Usage

DEFAULT_FOLDER = Path(".crucible-cache") / "llm"
_OFF = {"", "0", "off", "no", "false", "none"}


def default_cache_dir() -> Path | None:
    setting = os.environ.get("CRUCIBLE_LLM_CACHE")
    if setting is None:
        return DEFAULT_FOLDER
    return None if setting.strip().lower() in _OFF else Path(setting)


def cacheable(config: ChatConfig) -> bool:
    return config.temperature == 0


def cache_key(provider: str, base_url: str, model: str, config: ChatConfig, messages: list[dict],
              served: dict | None = None) -> str:
    # timeout_s changes how long we wait, not what comes back, so it is not part of the key.
    identity = {
        "provider": provider,
        "base_url": base_url.rstrip("/"),
        "model": model,
        "served": served or {},
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "seed": config.seed,
        "messages": [{"role": m.get("role"), "content": m.get("content")} for m in messages],
    }
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()


class ResponseCache:
    """One JSON file per reply under ``folder/<key[:2]>/<key>.json``, written atomically."""

    def __init__(self, folder: str | os.PathLike):
        self.folder = Path(folder)

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> Reply | None:
        try:
            entry = json.loads(self._path(key).read_text())
        except (OSError, json.JSONDecodeError):
            return None  # absent, or torn by a killed writer: ask the endpoint again
        return Reply(
            text=entry["text"], usage=Usage(), provider=entry["provider"], model=entry["model"],
            finish_reason=entry.get("finish_reason"), cached=True, original_usage=Usage.from_dict(entry.get("usage")),
        )

    def put(self, key: str, reply: Reply) -> None:
        entry = {
            "text": reply.text, "usage": reply.usage.to_dict(), "provider": reply.provider,
            "model": reply.model, "finish_reason": reply.finish_reason,
        }
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as handle:
                json.dump(entry, handle)
            os.replace(handle.name, path)
        except OSError:
            pass  # a read-only or full disk costs a repeated request later, nothing more
