"""A response cache on disk, keyed on provider, base URL, model, generation config and messages.

Only deterministic requests are cached (temperature 0, or a fixed seed): caching a sampled reply
would silently turn k samples into one. A hit returns the original reply with its original usage
(what producing it cost), marked ``cached``. Set ``CRUCIBLE_LLM_CACHE=off`` to disable it, or to a
folder to move it (default ``.crucible-cache/llm`` in the working directory).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from harness.llm.base import ChatConfig, Reply
from harness.usage import Usage

DEFAULT_FOLDER = Path(".crucible-cache") / "llm"
_OFF = {"", "0", "off", "no", "false", "none"}


def default_cache_dir() -> Path | None:
    setting = os.environ.get("CRUCIBLE_LLM_CACHE")
    if setting is None:
        return DEFAULT_FOLDER
    return None if setting.strip().lower() in _OFF else Path(setting)


def cacheable(config: ChatConfig) -> bool:
    return config.temperature == 0 or config.seed is not None


def cache_key(provider: str, base_url: str, model: str, config: ChatConfig, messages: list[dict]) -> str:
    # timeout_s changes how long we wait, not what comes back, so it is not part of the key.
    identity = {
        "provider": provider,
        "base_url": base_url.rstrip("/"),
        "model": model,
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
            text=entry["text"], usage=Usage.from_dict(entry.get("usage")), provider=entry["provider"],
            model=entry["model"], finish_reason=entry.get("finish_reason"), cached=True,
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
