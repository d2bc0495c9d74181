"""Metrics against hand-computed cases."""

import math
import subprocess
import sys

import pytest

from harness.records import metrics


def rec(problem, correct=True, speedup=None, status=None, flags=(), **extra):
    """A record; a measured speedup gets a tight interval (1% either side) unless one is given."""
    status = status or ("ok" if correct else "incorrect")
    ci = [0.99 * speedup, 1.01 * speedup] if isinstance(speedup, float) and speedup == speedup else None
    return {"problem_id": problem, "correct": correct, "status": status, "speedup": speedup,
            "speedup_ci": ci, "flags": list(flags), **extra}


# A level of 5 problems: speedups 2.0, 0.5, 1.0 on correct ones, one incorrect, one compile error.
LEVEL = [
    rec("L1/1", speedup=2.0, sol_fraction=0.4),
    rec("L1/2", speedup=0.5, sol_fraction=0.1),
    rec("L1/3", speedup=1.0, sol_fraction=0.2),
    rec("L1/4", correct=False),
    rec("L1/5", correct=False, status="compile_error"),
]


def test_level_summary_counts_problems_correct_and_compiled():
    summary = metrics.level_summary(LEVEL)
    assert summary["problems"] == 5
    assert summary["correct"] == 3
    assert summary["correctness_rate"] == pytest.approx(0.6)
    assert summary["compile_rate"] == pytest.approx(0.8)


def test_geomean_is_over_correct_problems_only():
    # (2 * 0.5 * 1) ** (1/3) = 1
    assert metrics.level_summary(LEVEL)["geomean_speedup"] == pytest.approx(1.0)


def test_fast_p_uses_strict_greater_and_whole_level_denominator():
    curve = metrics.level_summary(LEVEL)["fast_p"]
    assert curve[0] == pytest.approx(3 / 5)
    assert curve[0.5] == pytest.approx(2 / 5)  # 0.5 is not > 0.5
    assert curve[0.8] == pytest.approx(2 / 5)
    assert curve[1] == pytest.approx(1 / 5)  # 1.0 is not > 1
    assert curve[1.5] == pytest.approx(1 / 5)
    assert curve[2] == pytest.approx(0.0)  # 2.0 is not > 2
    assert metrics.level_summary(LEVEL)["fast_1"] == pytest.approx(1 / 5)


def test_total_problems_widens_the_denominator_for_missing_problems():
    summary = metrics.level_summary(LEVEL, total_problems=10)
    assert summary["fast_p"][0] == pytest.approx(0.3)
    assert summary["correctness_rate"] == pytest.approx(0.3)


def test_median_sol_fraction_of_correct_problems():
    assert metrics.level_summary(LEVEL)["median_sol_fraction"] == pytest.approx(0.2)


SAMPLES = [
    rec("L1/1", attempt=0, correct=False, speedup=9.0),  # an incorrect fast attempt is ignored
    rec("L1/1", attempt=1, speedup=1.2),
    rec("L1/1", attempt=2, speedup=1.8),
    rec("L1/2", attempt=0, correct=False),
    rec("L1/2", attempt=1, correct=False),
    rec("L1/2", attempt=2, correct=False),
]


def test_several_attempts_score_the_share_that_passes_by_default():
    summary = metrics.level_summary(SAMPLES)
    assert summary["correct"] == pytest.approx(2 / 3)  # L1/1: 2 of 3 attempts, L1/2: none
    assert summary["correctness_rate"] == pytest.approx(1 / 3) == summary["pass_at_k"][1]
    assert summary["geomean_speedup"] == pytest.approx((1.2 * 1.8) ** 0.5)
    assert summary["fast_1"] == pytest.approx((2 / 3) / 2)


def test_best_of_k_only_when_asked_takes_any_correct_attempt_and_best_speedup():
    summary = metrics.level_summary(SAMPLES, attempts="best")
    assert summary["correct"] == 1
    assert summary["geomean_speedup"] == pytest.approx(1.8)
    assert summary["fast_1"] == pytest.approx(0.5)


def test_flagged_attempt_never_counts_as_correct():
    records = [rec("L1/1", speedup=50.0, flags=["below_sol"]), rec("L1/2", speedup=1.5)]
    summary = metrics.level_summary(records)
    assert summary["correct"] == 1
    assert summary["flagged_records"] == 1
    assert summary["geomean_speedup"] == pytest.approx(1.5)


def test_unmeasured_speed_gives_none_not_zero_for_fast_p_above_zero():
    records = [rec("L1/1", speedup=None), rec("L1/2", correct=False)]
    summary = metrics.level_summary(records)
    assert summary["fast_p"][0] == pytest.approx(0.5)
    assert summary["fast_p"][1] is None
    assert summary["geomean_speedup"] is None


def test_no_correct_problem_gives_zero_fast_p():
    summary = metrics.level_summary([rec("L1/1", correct=False), rec("L1/2", correct=False)])
    assert summary["fast_p"][1] == 0.0
    assert summary["geomean_speedup"] is None


@pytest.mark.parametrize("baseline, expected", [("eager", 2.0), ("compile", 1.25), ("best", 1.25)])
def test_speedup_baseline_selects_eager_compile_or_faster_of_both(baseline, expected):
    records = [rec("L1/1", speedup=2.0, speedup_compile=1.25)]
    assert metrics.level_summary(records, baseline=baseline)["geomean_speedup"] == pytest.approx(expected)


def test_unknown_baseline_is_refused():
    with pytest.raises(ValueError, match="baseline"):
        metrics.level_summary([rec("L1/1", speedup=1.0)], baseline="fastest")


@pytest.mark.parametrize("n, c, k, expected", [
    (5, 0, 1, 0.0),
    (5, 5, 1, 1.0),
    (5, 2, 1, 0.4),              # pass@1 = c / n
    (5, 2, 2, 1 - 3 / 10),       # 1 - C(3,2)/C(5,2)
    (10, 3, 5, 1 - 21 / 252),    # 1 - C(7,5)/C(10,5)
    (4, 3, 2, 1.0),              # n - c < k: any k draws include a correct one
])
def test_pass_at_k_matches_the_binomial_formula(n, c, k, expected):
    assert metrics.pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_is_undefined_with_fewer_samples_than_k():
    assert metrics.pass_at_k(2, 1, 3) is None


def test_level_pass_at_k_averages_problems():
    records = [rec("L1/1", attempt=i, correct=i < 2, speedup=1.0) for i in range(4)]
    records += [rec("L1/2", attempt=i, correct=False) for i in range(4)]
    pass_at = metrics.level_summary(records)["pass_at_k"]
    assert pass_at[1] == pytest.approx((0.5 + 0.0) / 2)
    assert pass_at[2] == pytest.approx((1 - 1 / 6 + 0.0) / 2)  # 1 - C(2,2)/C(4,2)
    assert set(pass_at) == {1, 2, 3, 4}


def test_tokens_and_dollars_per_problem_and_per_correct_kernel():
    usage = lambda i, o, cost: {"input_tokens": i, "output_tokens": o, "cost_usd": cost}  # noqa: E731
    records = [
        rec("L1/1", attempt=0, correct=False, usage=usage(100, 50, 0.01)),
        rec("L1/1", attempt=1, speedup=1.0, usage=usage(100, 50, 0.01)),
        rec("L1/2", correct=False, usage=usage(200, 100, 0.04)),
    ]
    summary = metrics.level_summary(records, attempts="best")
    assert summary["tokens"] == 600
    assert summary["tokens_per_problem"] == pytest.approx(300)
    assert summary["tokens_per_correct"] == pytest.approx(600)
    assert summary["cost_per_problem"] == pytest.approx(0.03)
    assert summary["cost_per_correct"] == pytest.approx(0.06)


def test_cost_is_unknown_when_no_record_carries_usage():
    summary = metrics.level_summary([rec("L1/1", speedup=1.0)])
    assert summary["cost_per_correct"] is None and summary["tokens_per_problem"] is None


def test_nan_fields_from_pandas_read_as_missing():
    records = [rec("L1/1", speedup=float("nan"), sol_fraction=float("nan"))]
    records[0].update(flags=float("nan"), imported=float("nan"))
    summary = metrics.level_summary(records)
    assert summary["correct"] == 1 and summary["geomean_speedup"] is None


def test_numpy_booleans_from_pandas_count_as_booleans():
    numpy = pytest.importorskip("numpy")
    record = rec("L1/1", speedup=1.5)
    record.update(correct=numpy.bool_(True), imported=numpy.bool_(False))
    assert metrics.level_summary([record])["correct"] == 1
    assert metrics.is_ranked(record)


def test_imported_compiled_field_overrides_status():
    records = [{"problem_id": "L1/1", "correct": False, "compiled": False, "status": "incorrect"}]
    assert metrics.level_summary(records)["compile_rate"] == 0.0


def test_ranked_means_unflagged_and_not_imported():
    assert metrics.is_ranked({"flags": []})
    assert not metrics.is_ranked({"flags": ["timer_mismatch"]})
    assert not metrics.is_ranked({"flags": [], "imported": True})


def test_geomean_and_median_ignore_missing_values():
    assert metrics.geomean([4.0, None, 1.0, float("nan")]) == pytest.approx(2.0)
    assert metrics.median([3.0, None, 1.0, 2.0, 10.0]) == pytest.approx(2.5)
    assert metrics.geomean([]) is None


def test_bootstrap_ci_contains_the_mean_and_is_deterministic():
    values = [0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0]
    first = metrics.bootstrap_ci(values, "mean", seed=3)
    second = metrics.bootstrap_ci(values, "mean", seed=3)
    assert first == second
    low, high = first
    assert 0.0 <= low < 0.7 < high <= 1.0


def test_bootstrap_ci_of_constant_values_is_a_point():
    assert metrics.bootstrap_ci([2.0, 2.0, 2.0]) == (2.0, 2.0)
    assert metrics.bootstrap_ci([1.0]) is None


def test_group_records_buckets_by_keys_with_nan_as_none():
    groups = metrics.group_records(
        [{"level": 1, "generator": "a"}, {"level": 1, "generator": "a"}, {"level": math.nan, "generator": "b"}],
        ["level", "generator"],
    )
    assert {key: len(rows) for key, rows in groups.items()} == {(1, "a"): 2, (None, "b"): 1}


def test_metrics_and_leaderboard_data_layer_do_not_import_torch():
    code = (
        "import sys, harness.records.metrics, harness.records.boards, harness.records.run_table, harness.records.results, harness.problems.importers, "
        "leaderboard.data, leaderboard.tables, leaderboard.charts, leaderboard.paper_charts, leaderboard.display, "
        "leaderboard.figures, leaderboard.screenshots, leaderboard.cdp, leaderboard.interactive, leaderboard.views; "
        "assert 'torch' not in sys.modules, 'torch imported'; print('ok')"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


def test_excluded_problems_are_not_scored():
    from harness.records.metrics import level_summary

    records = [
        {"problem_id": "L2/1_A", "level": 2, "correct": True, "status": "ok", "speedup": 2.0, "flags": []},
        {"problem_id": "L2/36_B", "level": 2, "correct": True, "status": "ok", "speedup": 9.0, "flags": [],
         "excluded": "degenerate by construction"},
    ]
    summary = level_summary(records)
    assert summary["problems"] == 1 and summary["geomean_speedup"] == 2.0


# Noise-aware wins: the interval's lower bound must clear p.

@pytest.mark.parametrize("record, wins", [
    (rec("L1/1", speedup=1.001, speedup_ci=[0.98, 1.02]), False),     # 1.001x within noise: no win
    (rec("L1/1", speedup=1.05, speedup_ci=[1.01, 1.09]), True),       # interval wholly above 1
    (rec("L1/1", speedup=1.5, speedup_ci=None), False),               # no interval at all: not established
    (rec("L1/1", speedup=1.5, speedup_ci=None, eager_ms_ci=[1.4, 1.6], candidate_ms_ci=[0.9, 1.1]), True),
    (rec("L1/1", speedup=1.2, speedup_ci=None, eager_ms_ci=[1.0, 1.4], candidate_ms_ci=[0.9, 1.1]), False),
])
def test_fast_1_counts_a_win_only_when_the_interval_lies_above_1(record, wins):
    assert metrics.level_summary([record])["fast_1"] == (1.0 if wins else 0.0)
    low = metrics.speedup_low(record)
    assert (low is not None and low > 1.0) == wins


def test_old_records_get_a_conservative_interval_from_their_timing_intervals():
    record = rec("L1/1", speedup=1.5, speedup_ci=None, eager_ms_ci=[1.4, 1.6], candidate_ms_ci=[0.9, 1.1])
    assert metrics.speedup_low(record) == pytest.approx(1.4 / 1.1)
    compiled = {**record, "speedup_compile": 1.2, "compile_ms_ci": [1.1, 1.3]}
    assert metrics.speedup_low(compiled, "compile") == pytest.approx(1.1 / 1.1)
    assert metrics.speedup_low(compiled, "best") == pytest.approx(1.0)


def test_records_frame_and_dict_rules_agree_on_the_lower_bound():
    import pandas as pd

    records = [rec("L1/1", speedup=1.5, speedup_ci=None, eager_ms_ci=[1.4, 1.6], candidate_ms_ci=[0.9, 1.1]),
               rec("L1/2", speedup=2.0, speedup_compile=1.1, speedup_compile_ci=[1.0, 1.2]),
               rec("L1/3", speedup=1.2, speedup_ci=None)]
    for baseline in metrics.BASELINES:
        frame = metrics.attempt_frame(pd.DataFrame(records), baseline)
        expected = [metrics.speedup_low(r, baseline) for r in records]
        assert [None if v != v else pytest.approx(v) for v in frame["low"]] == expected


def test_failures_that_are_not_the_models_leave_the_denominator():
    records = [rec("L1/1", speedup=2.0), rec("L1/2", correct=False),
               rec("L1/3", correct=False, status="endpoint_error"), rec("L1/4", correct=False, endpoint_error=True)]
    summary = metrics.level_summary(records)
    assert summary["problems"] == 2 and summary["attempted"] == 2 and summary["correctness_rate"] == 0.5
    assert metrics.is_non_model(records[2]) and metrics.is_non_model(records[3])
    assert not metrics.is_non_model(records[1])


def test_excluded_records_are_neither_attempted_nor_in_the_denominator():
    records = [rec("L2/1", speedup=2.0), rec("L2/36", speedup=9.0, excluded="degenerate by construction")]
    summary = metrics.level_summary(records, total_problems=1)
    assert (summary["problems"], summary["attempted"], summary["correct"]) == (1, 1, 1)
