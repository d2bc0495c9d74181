"""Options shared by the LLM generators (each declares them in its ``options``), and run budgets.

A generator's own options sit in its own file (``direct``'s ``--samples``, ``kforge``'s passes);
these are the ones every LLM generator takes, declared once so that their help cannot drift.
"""

from __future__ import annotations

from harness.options import Option, positive_float


def _price(text: str) -> str:
    """Refuse a malformed price when the options are read, not at the first call."""
    from harness.llm.pricing import parse_price

    parse_price(text)
    return text


LLM_OPTIONS = (
    Option("--provider", "LLM provider: openai, replay or builtin",
           shown="openai if OPENAI_BASE_URL or OPENAI_API_KEY is set, else builtin, the offline rule-based writer"),
    Option("--llm-model", "model name sent to the endpoint", shown="$CRUCIBLE_LLM_MODEL"),
    Option("--llm-base-url", "OpenAI-compatible endpoint", shown="$OPENAI_BASE_URL"),
    Option("--temperature", "sampling temperature", positive_float("--temperature"), shown="generator's"),
    Option("--backend", "kernel language asked for: triton or cuda (load_inline)", shown="triton"),
    Option("--cassette", "replay provider: the cassette file to replay (or to write with --llm-record)"),
    Option("--llm-record", "replay provider: call the real endpoint and record the cassette", switch=True,
           key="record"),
    Option("--llm-price", "the model's price as INPUT,OUTPUT[,CACHED_INPUT] dollars per million tokens, for a "
                          "model the price table lacks (needed with --max-cost)", _price),
)


def budgets_from_args(args):
    """(per-problem budget, run budget) from parsed values (argparse namespace or equivalent)."""
    from harness.candidate import Budget

    return (Budget(max_tokens=getattr(args, "max_tokens", None), max_cost_usd=getattr(args, "max_cost", None)),
            Budget(max_tokens=getattr(args, "run_max_tokens", None), max_cost_usd=getattr(args, "run_max_cost", None)))
