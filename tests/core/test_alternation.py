"""Speedup as a ratio measured in alternation (harness.judge.alternation, harness.records.stats), pinned with a
scripted clock: a machine whose speed drifts 2x during the measurement, as launch-bound models'
times do on a shared host. These fail if the roles stop alternating, if the ratio is taken across
rounds, or if the interval stops covering the truth."""

from __future__ import annotations

import random

import pytest

from harness.judge.alternation import CANDIDATE, RoleFailed, calls_per_batch, round_order, run_rounds
from harness.records.stats import FASTER, INDISTINGUISHABLE, SLOWER, RatioStats, StopRule, ratio_stats, speed_verdict


class DriftingMachine:
    """A scripted clock: each role's call costs ``cost[role]`` ms times the machine's slowness,
    which drifts from 1x to ``drift``x as the clock advances; optional multiplicative noise."""

    def __init__(self, cost: dict[str, float], drift: float = 2.0, span_ms: float = 2000.0, noise: float = 0.0,
                 seed: int = 0):
        self.cost, self.drift, self.span_ms, self.noise = cost, drift, span_ms, noise
        self.now_ms = 0.0
        self.log: list[tuple[str, int]] = []
        self.rng = random.Random(seed)

    def slowness(self) -> float:
        return 1.0 + (self.drift - 1.0) * min(1.0, self.now_ms / self.span_ms)

    def time_batch(self, role: str, number: int, calls: int) -> list[float]:
        self.log.append((role, number))
        times = []
        for _ in range(calls):
            took = self.cost[role] * self.slowness() * (1 + self.noise * self.rng.uniform(-1, 1))
            self.now_ms += took
            times.append(took)
        return times

    def clock(self) -> float:
        return self.now_ms / 1e3


def test_identical_code_scores_one_on_a_machine_that_slows_down_2x_while_it_is_timed():
    machine = DriftingMachine({CANDIDATE: 1.0, "eager": 1.0}, drift=2.0, span_ms=400)
    rounds = run_rounds([CANDIDATE, "eager"], machine.time_batch, 4, StopRule(min_rounds=20, max_rounds=20),
                        clock=machine.clock)
    ratio = rounds.stats["eager"]
    # Timed one after the other, the second side would look about 1.5x slower; in alternation each
    # round's ratio stays within the drift across one batch.
    assert ratio.ci_low <= 1.0 <= ratio.ci_high
    assert abs(ratio.median - 1.0) < 0.02
    sequential = sum(rounds.times("eager")) / sum(rounds.times(CANDIDATE))
    assert abs(sequential - 1.0) < 0.05  # the rounds' pooled times agree too, because they alternated


def test_a_true_2x_speedup_is_measured_as_2x_under_drift_and_called_faster():
    machine = DriftingMachine({CANDIDATE: 0.5, "eager": 1.0, "compile": 0.8}, drift=2.0, span_ms=300, noise=0.02)
    rounds = run_rounds([CANDIDATE, "eager", "compile"], machine.time_batch, 4, StopRule(min_rounds=12, max_rounds=12),
                        clock=machine.clock)
    eager, compiled = rounds.stats["eager"], rounds.stats["compile"]
    assert eager.ci_low <= 2.0 <= eager.ci_high and abs(eager.median - 2.0) < 0.08
    assert compiled.ci_low <= 1.6 <= compiled.ci_high
    assert speed_verdict((eager.ci_low, eager.ci_high)) == FASTER


def test_roles_alternate_and_take_turns_going_first():
    machine = DriftingMachine({CANDIDATE: 1.0, "eager": 1.0, "compile": 1.0})
    run_rounds([CANDIDATE, "eager", "compile"], machine.time_batch, 2, StopRule(min_rounds=6, max_rounds=6),
               clock=machine.clock)
    by_round: dict[int, list[str]] = {}
    for role, number in machine.log:
        by_round.setdefault(number, []).append(role)
    assert len(by_round) == 6 and all(sorted(r) == ["candidate", "compile", "eager"] for r in by_round.values())
    firsts = [roles[0] for roles in by_round.values()]
    assert firsts.count(CANDIDATE) == firsts.count("eager") == firsts.count("compile") == 2
    assert round_order(["a", "b"], 0) == ("a", "b") and round_order(["a", "b"], 1) == ("b", "a")


def test_rounds_stop_once_the_interval_is_narrow_and_go_on_while_it_is_wide():
    steady = DriftingMachine({CANDIDATE: 1.0, "eager": 1.0}, drift=1.0)
    quick = run_rounds([CANDIDATE, "eager"], steady.time_batch, 4,
                       StopRule(min_rounds=8, max_rounds=200, target_halfwidth=0.01, budget_ms=1e9), clock=steady.clock)
    assert quick.stopped == "narrow" and quick.rounds == 8
    noisy = DriftingMachine({CANDIDATE: 1.0, "eager": 1.0}, drift=1.0, noise=0.3, seed=3)
    slow = run_rounds([CANDIDATE, "eager"], noisy.time_batch, 1,
                      StopRule(min_rounds=8, max_rounds=200, target_halfwidth=0.01, budget_ms=150), clock=noisy.clock)
    assert slow.stopped == "budget" and slow.rounds > 8
    assert slow.stats["eager"].halfwidth > 0.01


def test_a_failing_baseline_leaves_the_rounds_and_a_failing_candidate_ends_them():
    machine = DriftingMachine({CANDIDATE: 1.0, "eager": 1.0, "compile": 1.0})

    def compile_breaks_in_round_2(role, number, calls):
        if role == "compile" and number == 2:
            raise RoleFailed(role, "runtime_error", "inductor fell over")
        return machine.time_batch(role, number, calls)

    rounds = run_rounds([CANDIDATE, "eager", "compile"], compile_breaks_in_round_2, 2,
                        StopRule(min_rounds=6, max_rounds=6), clock=machine.clock)
    assert rounds.failed == {"compile": ("runtime_error", "inductor fell over")}
    assert set(rounds.stats) == {"eager"} and rounds.rounds == 6

    def candidate_breaks(role, number, calls):
        if role == CANDIDATE and number == 1:
            raise RoleFailed(role, "incorrect", "timed call 0 of a batch: mismatch")
        return machine.time_batch(role, number, calls)

    with pytest.raises(RoleFailed, match="incorrect"):
        run_rounds([CANDIDATE, "eager"], candidate_breaks, 2, StopRule(min_rounds=6, max_rounds=6), clock=machine.clock)


def test_the_interval_covers_the_truth_at_about_its_confidence():
    rng = random.Random(11)
    covered = 0
    for trial in range(200):
        ratios = [1.3 * rng.lognormvariate(0, 0.05) for _ in range(15)]
        stats = ratio_stats(ratios, seed=trial, resamples=1000)
        covered += stats.ci_low <= 1.3 <= stats.ci_high
    # A percentile bootstrap of a median over 15 rounds is a little liberal; far from 95% is broken.
    assert 0.85 <= covered / 200 <= 0.995


def test_the_interval_narrows_with_more_rounds_and_is_seeded():
    rng = random.Random(5)
    ratios = [rng.lognormvariate(0, 0.05) for _ in range(200)]
    few, many = ratio_stats(ratios[:10]), ratio_stats(ratios)
    assert many.halfwidth < few.halfwidth
    assert ratio_stats(ratios[:10]) == few


def test_verdicts_need_the_whole_interval_beyond_the_threshold():
    assert speed_verdict((1.001, 1.2)) == FASTER
    assert speed_verdict((0.98, 1.2)) == INDISTINGUISHABLE
    assert speed_verdict((0.5, 0.99)) == SLOWER
    assert speed_verdict((1.4, 1.6), threshold=1.5) == INDISTINGUISHABLE
    assert speed_verdict(None) is None
    assert RatioStats(2.0, 1.9, 2.1, 9).halfwidth == pytest.approx(0.05)


def test_batches_hold_about_the_target_time_within_bounds():
    assert calls_per_batch(1.0, 10.0, 16) == 10
    assert calls_per_batch(50.0, 10.0, 16) == 1
    assert calls_per_batch(0.01, 10.0, 16) == 16
    assert calls_per_batch(0.0, 10.0, 16) == 16
