"""Command-line options for LLM-backed generators, shared by the CLI and the pytest plugin."""

from __future__ import annotations

from harness.options import positive_float, positive_int


def whole_number(name: str):
    """A parser for counts where 0 means "none" (``--max-optimisation-passes 0``)."""
    from harness.errors import UserError

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise UserError(f"{name} {text!r} is not a whole number") from None
        if value < 0:
            raise UserError(f"{name} {text!r} must be 0 or more")
        return value

    return parse


def price(text: str):
    from harness.llm.pricing import parse_price

    parse_price(text)  # refuse a malformed price when the options are read, not at the first call
    return text

# (flag, destination, parser, default, help)
LLM_OPTIONS = (
    ("--provider", "provider", str, None, "LLM provider: openai, replay or builtin (default: openai if OPENAI_BASE_URL "
                                          "or OPENAI_API_KEY is set, else builtin, the offline rule-based writer)"),
    ("--llm-model", "llm_model", str, None, "model name sent to the endpoint (default: $CRUCIBLE_LLM_MODEL)"),
    ("--llm-base-url", "llm_base_url", str, None, "OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)"),
    ("--samples", "samples", positive_int("--samples"), None, "direct: k samples per problem (default: 1)"),
    ("--temperature", "temperature", positive_float("--temperature"), None, "sampling temperature (default: generator's)"),
    ("--backend", "backend", str, None, "kernel language asked for: triton or cuda (load_inline) (default: triton)"),
    ("--cassette", "cassette", str, None, "replay provider: the cassette file to replay (or to write with --llm-record)"),
    ("--llm-record", "record", "flag", False, "replay provider: call the real endpoint and record the cassette"),
    ("--max-functional-passes", "max_functional_passes", positive_int("--max-functional-passes"), None,
     "kforge: repair passes until correct (default: generator's)"),
    ("--max-optimisation-passes", "max_optimisation_passes", whole_number("--max-optimisation-passes"), None,
     "kforge: profile-guided optimisation passes; 0 stops at the first correct kernel (default: generator's)"),
    ("--llm-price", "llm_price", price, None, "the model's price as INPUT,OUTPUT[,CACHED_INPUT] dollars per million "
                                             "tokens, for a model the price table lacks (needed with --max-cost)"),
    ("--parallel", "parallel", positive_int("--parallel"), None, "direct: samples requested at once (default: 1)"),
    ("--max-cost", "max_cost", positive_float("--max-cost"), None, "stop generating for a problem past this many dollars"),
    ("--max-tokens", "max_tokens", positive_int("--max-tokens"), None, "stop generating for a problem past this many tokens"),
    ("--run-max-cost", "run_max_cost", positive_float("--run-max-cost"), None, "stop generating in the run past this many dollars"),
    ("--run-max-tokens", "run_max_tokens", positive_int("--run-max-tokens"), None, "stop generating in the run past this many tokens"),
)
_GENERATOR_KWARGS = ("provider", "llm_model", "llm_base_url", "samples", "temperature", "backend", "cassette",
                     "record", "max_functional_passes", "max_optimisation_passes", "parallel", "llm_price")


def add_llm_arguments(parser, prefix: str = "") -> None:
    """Add the options to an argparse parser (prefix '' ) or a pytest option group (prefix '')."""
    from harness.options import typed

    adder = getattr(parser, "add_argument", None) or parser.addoption
    for flag, dest, kind, default, text in LLM_OPTIONS:
        if kind == "flag":
            adder(prefix + flag, dest=dest, action="store_true", default=default, help=text)
        else:
            adder(prefix + flag, dest=dest, type=kind if kind is str else typed(kind), default=default, help=text)


def generator_options_from_args(args) -> dict:
    values = {name: getattr(args, name, None) for name in _GENERATOR_KWARGS}
    return {name: value for name, value in values.items() if value is not None and value is not False}


def budgets_from_args(args):
    from harness.candidate import Budget

    return (Budget(max_tokens=getattr(args, "max_tokens", None), max_cost_usd=getattr(args, "max_cost", None)),
            Budget(max_tokens=getattr(args, "run_max_tokens", None), max_cost_usd=getattr(args, "run_max_cost", None)))
