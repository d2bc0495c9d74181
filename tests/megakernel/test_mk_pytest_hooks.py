"""The megakernel suite's pytest hooks: a part is computed once per run, with or without xdist.

The suite's conftest once held these hooks; under ``pytest tests suites -n 2`` the xdist controller
never loaded it, so workers found no run key and every megakernel test errored at setup. These
tests run a throwaway suite in a subdirectory, the way CI runs the real one.
"""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

SUITE_TESTS = """
import os
from harness.megakernel.pytest_hooks import shared_part

def compute(section):
    with open(os.environ["MK_COUNT_FILE"], "a") as f:
        f.write("computed\\n")
    section["search"] = {"model": "toy", "kept": 1, "evaluated": 3}
    return 42

def test_first(request):
    assert shared_part(request.config, "search", compute) == ({"search": {"model": "toy", "kept": 1, "evaluated": 3}}, 42)

def test_second(request):
    assert shared_part(request.config, "search", compute)[1] == 42
"""


def _run(pytester, monkeypatch, tmp_path, *extra):
    count_file = tmp_path / "count.txt"
    summary = tmp_path / "summary.json"
    pytester.makepyfile(**{"suite/sub/test_parts.py": SUITE_TESTS})
    monkeypatch.setenv("MK_COUNT_FILE", str(count_file))
    result = pytester.runpytest_subprocess("suite", "-p", "no:cacheprovider", "--runs-dir", str(tmp_path / "runs"),
                                           "--mk-summary", str(summary), *extra)
    return result, count_file, summary


@pytest.mark.parametrize("extra", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_part_is_computed_once_and_the_controller_writes_the_summary(pytester, monkeypatch, tmp_path, extra):
    result, count_file, summary = _run(pytester, monkeypatch, tmp_path, *extra)
    result.assert_outcomes(passed=2)
    assert count_file.read_text().splitlines() == ["computed"]
    assert json.loads(summary.read_text())["search"]["evaluated"] == 3
    assert len(list((tmp_path / "runs").glob("*_megakernel_*.jsonl"))) == 1


def test_megakernel_options_are_known_from_the_repository_root(pytester):
    result = pytester.runpytest_subprocess("--help")
    result.stdout.fnmatch_lines(["*Crucible megakernel schedule suite*", "*--mk-size*"])
