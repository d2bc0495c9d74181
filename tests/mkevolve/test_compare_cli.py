"""``python -m harness compare``: option parsing, the summary table, and one small real run."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from harness.compare_cli import format_table, parse_settings, summarize
from harness.errors import UserError
from tests.mkevolve import toys


def test_generator_settings_are_parsed_per_generator_with_json_values():
    settings = parse_settings(["mkevolve.beam_width=3", "kforge.max_functional_passes=2", "mkevolve.backend=cuda"],
                              ["mkevolve", "kforge"])
    assert settings == {"mkevolve": {"beam_width": 3, "backend": "cuda"}, "kforge": {"max_functional_passes": 2}}
    with pytest.raises(UserError, match="GENERATOR.OPTION=VALUE"):
        parse_settings(["beam_width=3"], ["mkevolve"])
    with pytest.raises(UserError, match="not among --generators"):
        parse_settings(["direct.samples=2"], ["mkevolve"])


def record(problem_id: str, correct: bool, tokens: int, flags=(), speedup=None) -> dict:
    return {"problem_id": problem_id, "level": int(problem_id[1]), "correct": correct, "status": "ok" if correct else
            "incorrect", "flags": list(flags), "speedup": speedup,
            "usage": {"input_tokens": tokens, "output_tokens": 0}}


def test_summary_counts_correct_unflagged_problems_over_the_whole_selection_and_tokens_per_correct():
    problems = [toys.problem(toys.MLP, f"L2/{n}_P") for n in (1, 2, 3)] + [toys.problem(toys.MLP, "L3/1_Q")]
    excluded = toys.problem(toys.MLP, "L2/4_P")
    excluded.exclude = "degenerate by construction"
    problems.append(excluded)
    results = {
        "mkevolve": {"records": [record("L2/1_P", True, 100), record("L2/2_P", True, 300, flags=["below_sol"]),
                                 record("L3/1_Q", True, 50)], "seconds": {"L2/1_P": 2.0, "L3/1_Q": 1.0},
                     "run_file": "a.jsonl"},
        "direct": {"records": [record("L2/1_P", False, 60), record("L2/3_P", True, 40, speedup=2.0)],
                   "seconds": {"L2/1_P": 1.0}, "run_file": "b.jsonl"},
    }
    summary = summarize(results, problems)
    level2 = summary["L2"]
    assert level2["mkevolve"]["correct"] == 1 and level2["mkevolve"]["problems"] == 3  # the flagged one is not
    assert level2["mkevolve"]["tokens_per_correct"] == 400 and level2["mkevolve"]["wall_s"] == 2.0
    assert level2["direct"]["geomean_speedup"] == 2.0 and level2["direct"]["tokens_per_problem"] == 50
    assert summary["L3"]["direct"]["correct"] == 0
    table = "\n".join(format_table(summary, "test"))
    assert "L2: 3 problems, 1 excluded and not scored (test)" in table and "not measured" in table and "2.000 (1)" in table


@pytest.mark.slow
def test_compare_runs_each_generator_at_the_budget_and_prints_a_table_per_level(tmp_path, capsys):
    summary_file = tmp_path / "summary.json"
    code = main(["compare", "--generators", "reference,direct", "--token-budget", "5000", "--level", "1",
                 "--subset", "all", "--kernelbench-root", "tests/fixtures/problems_root", "--problem", "1_*",
                 "--provider", "builtin", "--no-timing", "--trials", "2", "--runs-dir", str(tmp_path),
                 "--json", str(summary_file)])
    assert code == 0
    out = capsys.readouterr().out
    assert "L1: 1 problems" in out and "token budget 5,000 per problem" in out
    rows = json.loads(summary_file.read_text())["summary"]["L1"]
    assert rows["reference"]["correct"] == 1 and rows["reference"]["tokens_per_problem"] == 0
    assert rows["direct"]["tokens_per_problem"] > 0
    assert len(list(tmp_path.glob("*.jsonl"))) == 2
