"""The one option table of the CLI (``python -m harness run|eval``) and the pytest plugin.

Typed parsers quote the bad value and the fix. An ``Option`` is declared once, with its default;
the help's "(default: ...)" is written from it, so the two surfaces cannot drift
(tests/core/test_option_table.py compares them). Generators declare their own options (a class
attribute ``options``); ``run_options()`` gathers them from the registry.

This module is a leaf: it imports nothing from the harness at import time, so every other module
may import it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable

from harness.errors import UserError

DEVICES = ("cpu", "cuda")
SIZES = ("full", "small")
PRECISIONS = ("fp32", "fp16", "bf16")
ON_OFF_AUTO = ("on", "off", "auto")
DEFAULT_RUNS_DIR = "runs"  # ignored by git; `python -m harness publish RUNFILE` copies a run into results/
DEFAULT_GENERATOR = "reference"


def typed(parse):
    """Adapt a parser here to argparse (used by the CLI and by pytest): a UserError becomes
    argparse's usage error, which prints the message and exits with status 2."""
    import argparse

    def convert(text):
        try:
            return parse(text)
        except UserError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    convert.__name__ = getattr(parse, "__name__", "value")
    return convert


def choice(name: str, allowed: tuple[str, ...]):
    def parse(text: str) -> str:
        if text not in allowed:
            raise UserError(f"{name} {text!r} is not valid; choose one of: {', '.join(allowed)}")
        return text

    return parse


def _count(name: str, least: int, wording: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise UserError(f"{name} {text!r} is not a whole number") from None
        if value < least:
            raise UserError(f"{name} {text!r} must be {wording}")
        return value

    return parse


def positive_int(name: str):
    return _count(name, 1, "at least 1")


def whole_number(name: str):
    """A count where 0 means none (``--max-optimisation-passes 0``: stop at the first correct kernel)."""
    return _count(name, 0, "0 or more")


def positive_float(name: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise UserError(f"{name} {text!r} is not a number") from None
        if value <= 0:
            raise UserError(f"{name} {text!r} must be positive")
        return value

    return parse


@dataclass(frozen=True)
class Option:
    """One command-line option. ``shown`` is the help's default when ``default`` does not say it
    (a default computed later, or a generator's own default)."""

    flag: str
    help: str
    parse: Callable[[str], Any] | None = None  # None: the text as given
    default: Any = None
    shown: str | None = None
    switch: bool = False  # a flag without a value (store_true)
    repeat: bool = False  # may be given several times (a list)
    key: str | None = None  # the value's name, when not the flag's (--llm-record is ``record``)

    @property
    def dest(self) -> str:
        return self.key or self.flag.lstrip("-").replace("-", "_")

    def help_text(self) -> str:
        shown = self.shown if self.shown is not None else None if self.default is None or self.switch else str(self.default)
        return f"{self.help} (default: {shown})" if shown is not None else self.help

    def arguments(self) -> dict[str, Any]:
        """Keyword arguments of argparse's ``add_argument`` and pytest's ``addoption``."""
        default = bool(self.default) if self.switch else self.default
        kwargs: dict[str, Any] = {"dest": self.dest, "default": default, "help": self.help_text()}
        if self.switch:
            kwargs["action"] = "store_true"
        elif self.repeat:
            kwargs["action"] = "append"
        if self.parse is not None:
            kwargs["type"] = typed(self.parse)
        return kwargs


def add_options(adder: Callable[..., Any], options: Iterable[Option]) -> None:
    """Add ``options`` with ``adder``: an argparse parser's ``add_argument`` or a pytest group's ``addoption``."""
    for option in options:
        adder(option.flag, **option.arguments())


SELECTION = (
    Option("--generator", "kernel generator to run; a suite's tests run only for the generators that write "
           "candidates for it (docs/INTERFACES.md, section 6)", shown=f"{DEFAULT_GENERATOR}; with none named, "
           "every suite runs its own checks"),
    Option("--level", "KernelBench levels, e.g. 1,2", default="1,2,3"),
    Option("--problem", "glob over problem names or ids, e.g. 'L2/23_*' (repeatable)", repeat=True),
    Option("--subset", "all, representative (upstream's subset), starter or sample50 (every fifth problem of each level)",
           default="all"),
    Option("--kernelbench-root", "load problems from an upstream KernelBench checkout"),
    Option("--resume", "append to the newest matching run file and skip recorded problems", switch=True),
)

EVAL = (
    Option("--device", "where to run: cpu (correctness; CPU timings; Triton through its interpreter) or cuda",
           choice("--device", DEVICES), "cpu"),
    Option("--size", "problem size: small (declared by the problem, or a best-effort shrink) or full",
           choice("--size", SIZES), "small"),
    Option("--precision", "floating precision of inputs and weights: fp32, fp16 or bf16 (tolerance 1e-4, "
           "1e-2 for fp16/bf16)", choice("--precision", PRECISIONS), "fp32"),
    Option("--trials", "correctness trials, each on fresh inputs", positive_int("--trials"), 5),
    Option("--tolerance", "atol = rtol override", positive_float("--tolerance"), shown="by precision"),
    Option("--no-timing", "check correctness only", switch=True),
    Option("--compile-baseline", "also time torch.compile of the reference: on, off, auto = on for cuda only",
           choice("--compile-baseline", ON_OFF_AUTO), "auto"),
    Option("--allow-tf32", "allow TF32 for fp32 matmuls on both sides", switch=True),
    Option("--timing-budget-ms", "time budget of each adaptive timing phase", positive_float("--timing-budget-ms"),
           shown="2000 on cuda, 500 on cpu"),
    Option("--runs-dir", "where run files are appended (a local folder git ignores; publish a run into "
           "results/ with python -m harness publish)", default=DEFAULT_RUNS_DIR),
)

BUDGETS = (
    Option("--max-cost", "stop generating for a problem past this many dollars", positive_float("--max-cost")),
    Option("--max-tokens", "stop generating for a problem past this many tokens", positive_int("--max-tokens")),
    Option("--run-max-cost", "stop generating in the run past this many dollars", positive_float("--run-max-cost")),
    Option("--run-max-tokens", "stop generating in the run past this many tokens", positive_int("--run-max-tokens")),
)


EXECUTORS = ("local", "ray")

EXECUTION = (
    Option("--executor", "where problems run: local (this process, one after another) or ray (one Ray task per "
           "problem on a Ray cluster; needs pip install crucible-kernels[ray])", choice("--executor", EXECUTORS), "local"),
    Option("--ray-address", "with --executor ray: the cluster to join, e.g. 10.0.0.5:6379 or auto",
           shown="$RAY_ADDRESS, else a Ray instance started on this machine"),
)


def run_options() -> tuple[Option, ...]:
    """Everything ``python -m harness run`` and ``pytest suites/`` take, generators' options included."""
    return SELECTION + EVAL + BUDGETS + EXECUTION + tuple(generator_option_table())


def generator_option_table() -> list[Option]:
    """Every registered generator's declared options, once each, help prefixed with who takes it.
    On the command line they default to None, so a generator gets only what was given."""
    owners: dict[str, list[str]] = {}
    declared: dict[str, Option] = {}
    for name, option in _declarations():
        first = declared.setdefault(option.flag, option)
        if first != option:
            raise UserError(f"generators {', '.join(owners[option.flag])} and {name} declare {option.flag} "
                            "differently; declare it once (for example in harness/llm_options.py) and share it")
        owners.setdefault(option.flag, []).append(name)
    return [_as_generator_option(option, owners[flag]) for flag, option in sorted(declared.items())]


def generator_kwargs(generator: str, value: Callable[[str], Any]) -> dict[str, Any]:
    """The keyword arguments for ``generator`` from parsed values (``value(dest)``); a UserError
    for a generator option given to a generator that does not take it."""
    from harness import registry

    own = {option.dest for option in getattr(registry.lookup("generator", generator), "options", ())}
    kwargs, stray = {}, []
    for option in generator_option_table():
        given = value(option.dest)
        if given is None or given is False:  # not "in (None, False)": 0 == False, and 0 passes is a value
            continue
        if option.dest in own:
            kwargs[option.dest] = given
        else:
            stray.append(option.flag)
    if stray:
        raise UserError(f"generator {generator!r} does not take {', '.join(stray)}; "
                        f"see --help for which generators take them")
    return kwargs


def _declarations() -> list[tuple[str, Option]]:
    from harness import registry

    return [(name, option) for name, factory in registry.loaded("generator").items()
            for option in getattr(factory, "options", ())]


def _as_generator_option(option: Option, owners: list[str]) -> Option:
    shown = option.shown if option.shown is not None else None if option.switch or option.default is None \
        else str(option.default)
    return replace(option, help=f"{', '.join(owners)}: {option.help}", default=None, shown=shown)
