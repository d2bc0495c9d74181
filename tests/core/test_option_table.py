"""One option table: ``python -m harness run`` and ``pytest suites/`` take the same options, with
the same defaults and help, and every help default is the value the code uses."""

import pytest

pytest_plugins = ["pytester"]


def _cli_run_options() -> dict[str, tuple]:
    from harness.cli import build_parser

    parser = build_parser()
    run = parser._subparsers._group_actions[0].choices["run"]  # argparse keeps subparsers here
    return {tuple(a.option_strings): (a.dest, a.default, a.help) for a in run._actions if a.dest != "help"}


def _pytest_options(pytester) -> dict[str, tuple]:
    config = pytester.parseconfig()
    group = config._parser.getgroup("crucible")  # pytest keeps its option groups on the parser
    return {tuple(o.names()): (o.dest, o.default, o.attrs()["help"]) for o in group.options}


def test_the_cli_and_the_pytest_plugin_take_the_same_options_with_the_same_defaults_and_help(pytester):
    cli, plugin = _cli_run_options(), _pytest_options(pytester)
    assert set(cli) == set(plugin), f"only in the CLI: {set(cli) - set(plugin)}; only in pytest: {set(plugin) - set(cli)}"
    assert {name: cli[name] for name in cli if cli[name] != plugin[name]} == {}
    assert {("--tolerance",), ("--allow-tf32",), ("--samples",), ("--parallel",)} <= set(cli)


def test_help_defaults_are_the_values_the_code_uses():
    from harness.options import generator_option_table, run_options
    from submitters.direct import Direct
    from submitters.kforge import KForge

    helps = {option.flag: option.help_text() for option in run_options()}
    direct, forge = Direct(), KForge()
    assert f"(default: {direct.parallel})" in helps["--parallel"]
    assert f"(default: {direct.samples})" in helps["--samples"]
    assert f"(default: {forge.max_functional_passes})" in helps["--max-functional-passes"]
    assert f"(default: {forge.max_optimisation_passes})" in helps["--max-optimisation-passes"]
    # generator options reach a generator only when given, so each keeps its own default
    assert all(option.arguments()["default"] in (None, False) for option in generator_option_table())


def test_eval_options_from_the_table_defaults_match_the_judge_defaults():
    from harness.judge.eval_setup import eval_options_from
    from harness.options import EVAL

    opts = eval_options_from({option.dest: option.arguments()["default"] for option in EVAL}.get)
    assert (opts.device, opts.size, opts.precision, opts.trials, opts.timing, opts.allow_tf32) == \
        ("cpu", "small", "fp32", 5, True, False)
    assert opts.plan.stop.budget_ms == 500.0


def test_two_generators_declaring_one_flag_differently_is_a_named_error(monkeypatch):
    from harness import options as table
    from harness.errors import UserError
    from harness.options import Option

    clash = [("one", Option("--depth", "a", default=1)), ("two", Option("--depth", "b", default=2))]
    monkeypatch.setattr(table, "_declarations", lambda: clash)
    with pytest.raises(UserError, match="generators one and two declare --depth differently"):
        table.generator_option_table()
