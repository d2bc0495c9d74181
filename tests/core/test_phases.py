"""A record says where its evaluation's wall time went (``phases_s``): the worker's start, load,
correctness, timing, and each baseline's start and check the first time a run uses it."""

from __future__ import annotations

from harness.judge.evaluate import EvalCache, EvalOptions, evaluate
from harness.judge.workers import WorkerLimits
from harness.records.stats import StopRule
from harness.judge.timing import TimingPlan

GOOD = """import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        return torch.relu(x * 2.0 + self.bias)
"""
HANG = GOOD.replace("return torch.relu", "import time\n        time.sleep(3600)\n        return torch.relu")


def _opts(**changes) -> EvalOptions:
    limits = WorkerLimits(memory_bytes=3 << 30, load_s=60, first_call_s=5, call_s=5)
    return EvalOptions(trials=3, plan=TimingPlan(stop=StopRule(min_rounds=3, budget_ms=50)), limits=limits, **changes)


def test_a_timed_record_has_every_phase_and_the_eager_baseline_only_once(scale_relu):
    cache = EvalCache()
    first = evaluate(scale_relu, GOOD, _opts(), cache)
    second = evaluate(scale_relu, GOOD, _opts(), cache)
    assert first["status"] == second["status"] == "ok"
    phases = first["phases_s"]
    assert {"spawn", "ready", "load", "correctness", "baselines", "timing", "close"} <= set(phases["candidate"])
    assert {"ready", "load", "correctness", "check"} <= set(phases["eager"])  # its start and check; timed with the candidate
    assert "compile" not in phases  # off on the CPU by default
    assert phases["eager"]["check"] <= phases["candidate"]["baselines"] + 1e-3
    assert "eager" not in second["phases_s"]  # started and checked once for the problem, for the first record
    for record in (first, second):
        # A baseline's start and check happen inside the candidate's "baselines" lap.
        spent = record["phases_s"]["reference"] + sum(record["phases_s"]["candidate"].values())
        assert all(v >= 0 for laps in record["phases_s"].values() if isinstance(laps, dict) for v in laps.values())
        assert 0 < spent <= record["elapsed_s"] + 1e-3


def test_a_failed_session_says_how_long_it_ran_before_the_verdict(scale_relu):
    record = evaluate(scale_relu, HANG, _opts(timing=False), EvalCache())
    assert record["status"] == "timeout"
    laps = record["phases_s"]["candidate"]
    assert "correctness" not in laps and laps["until_failure"] >= 5.0
