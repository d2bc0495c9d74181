"""Read a chat conversation the way the builtin writer needs it.

Conventions (``harness/llm/prompts.py``): the reference is a ```python block containing
``class Model``; a previous candidate is a block containing ``class ModelNew``; the judge's
verdict on it is a user message starting ``Feedback: <status>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_BLOCK = re.compile(r"```[ \t]*(?:python|py)?[^\n]*\n(.*?)```", re.DOTALL)
_MODEL = re.compile(r"^\s*class\s+Model\s*[(:]", re.MULTILINE)
_MODEL_NEW = re.compile(r"^\s*class\s+ModelNew\b", re.MULTILINE)
_FEEDBACK = re.compile(r"^\s*Feedback:\s*([A-Za-z_]+)")
_VARIANT = re.compile(r"^# builtin-variant:\s*(\S+)", re.MULTILINE)
_ANALYST = ("performance analyst", "do not write the code")


@dataclass(frozen=True)
class Conversation:
    reference: str | None          # the problem's source
    candidate: str | None          # the latest ModelNew shown in the conversation
    feedback: str | None           # status of the latest feedback message, if it is the last user turn
    analysis_request: bool         # a performance-analyst prompt: advice wanted, not code

    @property
    def previous_variant(self) -> str | None:
        """The builtin variant that wrote ``candidate`` (None when another writer made it)."""
        if not self.candidate:
            return None
        found = _VARIANT.search(self.candidate)
        return found.group(1) if found else None


def read(messages: list[dict]) -> Conversation:
    reference = candidate = None
    for message in messages:
        for block in _BLOCK.findall(str(message.get("content") or "")):
            if _MODEL_NEW.search(block):
                candidate = block
            elif _MODEL.search(block):
                reference = block
    return Conversation(reference=reference, candidate=candidate, feedback=_last_feedback(messages),
                        analysis_request=_is_analysis(messages))


def _last_feedback(messages: list[dict]) -> str | None:
    users = [m for m in messages if m.get("role") == "user"]
    if not users:
        return None
    found = _FEEDBACK.match(str(users[-1].get("content") or ""))
    return found.group(1).lower() if found else None


def _is_analysis(messages: list[dict]) -> bool:
    system = " ".join(str(m.get("content") or "") for m in messages if m.get("role") == "system").lower()
    return all(marker in system for marker in _ANALYST)
