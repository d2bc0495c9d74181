"""Rankings and chart data, checked against the fixture's hand-computed numbers."""

import pandas as pd
import pytest

from harness.records.results import load_records
from leaderboard import data, tables
from leaderboard_fixtures import L1


@pytest.fixture(scope="module")
def frame(results_dir):
    return data.load_frame(results_dir).frame


@pytest.fixture(scope="module")
def full_records(results_dir):
    return load_records([results_dir / "runs"])


def board_of(table, level):
    rows = table[(table["level"] == level) & (table["role"] != "imported")]
    return {row["generator"]: row for row in rows.to_dict("records")}


def test_level_one_ranking_order_and_numbers(frame):
    board = tables.leaderboard(frame)
    level1 = board[(board["level"] == 1) & (board["role"] == "ranked")]
    assert list(level1["generator"]) == ["mkevolve", "kforge", "direct"]
    assert list(level1["rank"]) == [1, 2, 3]
    rows = board_of(board, 1)
    # direct: 3 samples per problem, 2 of 3 correct (1.5x, 2.0x) on problems 1-3: scored as shares
    assert rows["direct"]["correct"] == pytest.approx(2.0) and rows["direct"]["attempted"] == 4
    assert rows["direct"]["geomean_speedup"] == pytest.approx((1.5 * 2.0) ** 0.5)
    assert rows["direct"]["fast_1"] == pytest.approx(3 * (2 / 3) / 4)
    assert rows["direct"]["cost_per_correct"] == pytest.approx(0.12 / 2)


def test_baselines_are_reference_rows_without_rank(frame):
    level1 = board_of(tables.leaderboard(frame), 1)
    for name in ("inductor", "PyTorch eager", "torch.compile"):
        assert level1[name]["role"] == "reference" and pd.isna(level1[name]["rank"])
    assert level1["torch.compile"]["geomean_speedup"] == pytest.approx(1.0 / 0.8)


def test_flagged_result_counts_as_a_failure_not_as_a_smaller_level(frame):
    kforge = board_of(tables.leaderboard(frame), 1)["kforge"]
    assert kforge["problems"] == 4 and kforge["correct"] == 3
    assert kforge["fast_1"] == pytest.approx(0.75) and kforge["flagged_records"] == 1


def test_imported_results_are_not_ranked_but_summarised_beside(frame):
    assert "upstream-published" not in set(tables.leaderboard(frame)["generator"])
    imported = tables.imported_board(frame)
    assert list(imported["generator"]) == ["upstream-published"]
    assert imported.iloc[0]["geomean_speedup"] == pytest.approx(3.0)


def test_filtering_generators_keeps_the_whole_level_as_denominator(frame):
    sizes = tables.level_sizes(frame)
    only_mkevolve = frame[(frame["generator"] == "mkevolve") & (frame["problem_id"] != L1[3])]
    row = board_of(tables.leaderboard(only_mkevolve, sizes=sizes), 1)["mkevolve"]
    assert row["problems"] == 4 and row["fast_1"] == pytest.approx(3 / 4)


def test_baseline_choice_changes_speedups(frame):
    eager = board_of(tables.leaderboard(frame, "eager"), 2)["inductor"]
    best = board_of(tables.leaderboard(frame, "best"), 2)["inductor"]
    assert eager["geomean_speedup"] == pytest.approx(1.2)
    assert best["geomean_speedup"] == pytest.approx(0.96) and best["fast_1"] == 0.0


def test_bootstrap_intervals_are_attached_on_request(frame):
    row = board_of(tables.leaderboard(frame, with_ci=True), 1)["direct"]
    low, high = row["fast_1_ci"]
    assert low <= 0.5 <= high and low < high


def test_flagged_records_table_lists_flags(frame):
    flagged = tables.flagged_records(frame)
    assert list(flagged["flags"]) == ["below_sol"]


def test_fast_p_curve_steps_at_the_best_speedup(frame):
    curves = tables.fast_p_curves(frame)
    direct = curves[(curves["generator"] == "direct") & (curves["level"] == 1)].set_index("p")["fast_p"]
    # the 2.0x attempt's interval starts at 1.9: a win over 1.85, none over 1.9 (strict)
    assert direct[1.85] == pytest.approx(3 * (1 / 3) / 4) and direct[1.9] == 0.0


def test_best_speedups_use_the_faster_baseline(frame):
    speedups = tables.best_speedups(frame, "best")
    direct = speedups[(speedups["generator"] == "direct") & (speedups["level"] == 1)]
    assert sorted(direct["speedup"]) == pytest.approx([(1.2 * 1.6) ** 0.5] * 3)  # min(eager, compile) per attempt


@pytest.mark.parametrize("points, front", [
    ([(1, 1.0), (2, 2.0), (3, 1.5)], [(1, 1.0), (2, 2.0)]),
    ([(1, 2.0), (2, 1.0)], [(1, 2.0)]),
    ([(2, 1.0), (1, 1.0)], [(1, 1.0)]),
    ([], []),
])
def test_pareto_front_keeps_cheaper_or_faster_points(points, front):
    assert tables.pareto_front(points) == front


def test_cost_speedup_points_mark_the_front_per_level(frame):
    points = tables.cost_speedup_points(tables.leaderboard(frame))
    on_front = {(row["label"], row["level"]) for row in points.to_dict("records") if row["on_front"]}
    assert on_front == {("mkevolve / gpt-test", 1), ("direct / gpt-test", 1),
                        ("mkevolve / gpt-test", 2), ("kforge / gpt-test", 2)}


def test_refinement_steps_accumulate_correctness_and_best_speedup(full_records):
    steps = tables.refinement_steps(full_records)
    level1 = steps[steps["level"] == 1].set_index("step")
    assert list(level1["correctness"]) == [0.0, 0.0, 0.75, 0.75]  # the flagged problem never counts
    assert level1.loc[2, "geomean_speedup"] == pytest.approx(1.1)
    assert level1.loc[3, "geomean_speedup"] == pytest.approx(1.6)
    assert set(steps["generator"]) == {"kforge"}


def test_tokens_correctness_traces_best_of_k_for_multi_sample_generators(full_records):
    points = tables.tokens_correctness(full_records)
    direct = points[(points["generator"] == "direct") & (points["level"] == 1)].set_index("k")
    assert list(direct["tokens_per_problem"]) == [1500, 3000, 4500]
    assert list(direct["correctness"]) == [0.0, 0.75, 0.75]
    mkevolve = points[(points["generator"] == "mkevolve") & (points["level"] == 1)]
    assert list(mkevolve["tokens_per_problem"]) == [4000] and list(mkevolve["correctness"]) == [1.0]


def test_problem_rows_sort_attempts_for_drill_down(frame):
    rows = tables.problem_rows(frame[frame["problem_id"] == L1[0]])
    assert list(rows["generator"])[:3] == ["direct", "direct", "direct"]
    assert list(rows["attempt"])[:3] == [0, 1, 2]
