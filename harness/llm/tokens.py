"""Local token counts, used only when an endpoint reports no usage; the results say "estimated".

``tiktoken``'s ``o200k_base`` is used when it is installed and its encoding is available offline;
otherwise a rule of thumb for code and English (about four UTF-8 bytes per token, never fewer
tokens than words and symbols / 2) stands in. Either way the count is an estimate.
"""

from __future__ import annotations

import re
from functools import lru_cache

_PIECES = re.compile(r"\w+|[^\w\s]")
# Each chat message costs a few framing tokens (role, separators) on OpenAI-style endpoints.
MESSAGE_OVERHEAD = 4


@lru_cache(maxsize=1)
def _encoder():
    try:
        import tiktoken

        return tiktoken.get_encoding("o200k_base")
    except Exception:  # noqa: BLE001 - not installed, or its encoding file cannot be fetched offline
        return None


def count_text(text: str) -> int:
    if not text:
        return 0
    encoder = _encoder()
    if encoder is not None:
        return len(encoder.encode(text, disallowed_special=()))
    by_bytes = len(text.encode()) // 4
    by_pieces = len(_PIECES.findall(text)) // 2
    return max(1, by_bytes, by_pieces)


def count_messages(messages: list[dict]) -> int:
    return sum(MESSAGE_OVERHEAD + count_text(str(m.get("content") or "")) for m in messages)


def method() -> str:
    """Which counter is in use, for the record."""
    return "tiktoken:o200k_base" if _encoder() is not None else "heuristic:bytes/4"
