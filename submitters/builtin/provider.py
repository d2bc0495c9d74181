"""The ``builtin`` provider: answers kernel-writing chats with rule-written Triton, offline.

It is not a language model. It reads the reference from the conversation, writes ModelNew with
the rules of this package, and says plainly when no rule covers the problem. After failure
feedback it tries the next, more conservative variant; after ``ok`` feedback it offers a
differently tuned variant; when it has none left it says so. It makes no network call: token
counts are local estimates and the cost is zero.
"""

from __future__ import annotations

from typing import Any

from harness.llm.base import ChatConfig, Reply
from submitters.builtin import prompt
from harness.registry import register
from harness.records.usage import Usage

PROVIDER = "builtin"
MODEL = "builtin-rules-v1"
UNSUPPORTED = "unsupported"


@register("provider", "builtin")
class BuiltinProvider:
    """``chat(messages, config) -> Reply`` like every provider; options are accepted and ignored."""

    name = PROVIDER

    def __init__(self, **options: Any):
        self.options = options

    def chat(self, messages: list[dict], config: ChatConfig = ChatConfig()) -> Reply:
        text, finish = respond(prompt.read(messages))
        return Reply(text=text, usage=_usage(messages, text), provider=PROVIDER, model=MODEL, finish_reason=finish)


def respond(conversation: prompt.Conversation) -> tuple[str, str]:
    """(reply text, finish reason) for a conversation."""
    if conversation.analysis_request:
        return _advice(conversation), "stop"
    if not conversation.reference:
        return cannot("a conversation without the reference (a ```python block defining class Model)")
    variant, why = next_variant(conversation)
    if variant is None:
        return cannot(why)
    return write_reply(conversation.reference, variant, why)


def next_variant(conversation: prompt.Conversation) -> tuple[str | None, str]:
    """The variant to write now and the reason, or (None, what cannot be done)."""
    from submitters.builtin.writer import FALLBACK, TUNING_ORDER

    previous, status = conversation.previous_variant, conversation.feedback
    if status is None or previous is None:
        return "default", "first attempt" if status is None else "a first builtin attempt for this problem"
    if status != "ok":
        if previous != FALLBACK:
            return FALLBACK, f"the {previous} variant was judged {status}"
        return None, f"a further repair: the {previous} variant was judged {status} and no more conservative variant exists"
    if previous in TUNING_ORDER and TUNING_ORDER.index(previous) + 1 < len(TUNING_ORDER):
        return TUNING_ORDER[TUNING_ORDER.index(previous) + 1], f"the {previous} variant was judged ok"
    return None, f"a further improvement: no other tuning than the {previous} variant is known"


def write_reply(reference: str, variant: str, why: str) -> tuple[str, str]:
    from submitters.builtin.ir import NoRule
    from submitters.builtin.writer import VARIANTS, write

    try:
        written = write(reference, variant)
    except NoRule as error:
        return cannot(error.what)
    except Exception as error:  # a bug in the rules must not take a whole run down: report it as a reply
        return (f"builtin: no kernel written: the rule-based writer failed internally "
                f"({type(error).__name__}: {error}). This is a bug in Crucible's builtin provider."), "error"
    lines = [f"builtin (a rule-based kernel writer, not a language model), variant `{variant}` "
             f"({VARIANTS[variant].note}; {why}):"]
    lines += [f"- {summary}" for summary in written.kernels]
    if written.kept:
        lines.append(f"- kept in PyTorch: {', '.join(dict.fromkeys(written.kept))}")
    lines += ["", "```python", written.source.rstrip(), "```"]
    return "\n".join(lines) + "\n", "stop"


def cannot(what: str) -> tuple[str, str]:
    return (f"builtin: no rule for {what}. The builtin provider is a rule-based kernel writer, not a language "
            "model; it knows elementwise and activation chains with broadcasting, row reductions (softmax, "
            "log-softmax, logsumexp, sum, mean, max, min, argmax, norms), layer/RMS/group/instance norms and "
            "matmuls with fused epilogues, after convolutions and pooling kept in PyTorch."), UNSUPPORTED


def _advice(conversation: prompt.Conversation) -> str:
    previous = conversation.previous_variant or "default"
    return ("builtin (rule-based, not a language model) has no profiler-driven analysis. Recommendation: keep "
            f"the fused kernels of the {previous} variant and try different tile sizes and warp counts.")


def _usage(messages: list[dict], reply: str) -> Usage:
    from harness.llm.tokens import count_messages, count_text

    return Usage(input_tokens=count_messages(messages), output_tokens=count_text(reply), cost_usd=0.0, calls=1,
                 estimated=True)
