"""EvalOptions from option values: the one place that turns the option table's values into the
judge's settings (worker limits, timing plan, budgets), for the CLI, the pytest plugin and scripts.

Kept apart from harness.options (the table and its parsers, a leaf every module may import) so
that the table does not pull in the judge, the timer and the device code.
"""

from __future__ import annotations

import os
from typing import Any, Callable


def eval_options(device="cpu", precision="fp32", size="small", timing=True, trials=5, tolerance=None,
                 allow_tf32=False, compile_baseline="auto", timing_budget_ms=None, memory_gb=None, secret=None,
                 gpu_index=None):
    """EvalOptions from already-parsed option values (device availability checked here)."""
    from harness.judge.device import check_device
    from harness.judge.evaluate import EvalOptions
    from harness.judge.workers import WorkerLimits
    from harness.records.stats import StopRule
    from harness.judge.timing import TimingPlan

    check_device(device)
    limits = WorkerLimits()
    if memory_gb:
        limits.memory_bytes = int(memory_gb * (1 << 30))
    elif device == "cuda":
        limits.memory_bytes = 64 << 30
    plan = TimingPlan()
    budget = timing_budget_ms or (2000.0 if device == "cuda" else 500.0)
    plan.stop = StopRule(budget_ms=budget)
    if device == "cuda":
        plan.memory_budget_bytes = 8 << 30
    control = os.environ.get("CRUCIBLE_TIMING_CONTROL", "0") == "1"   # a second eager worker: the timer's A/A check
    return EvalOptions(device=device, precision=precision, size=size, timing=timing, trials=trials,
                       tolerance=tolerance, allow_tf32=allow_tf32, compile_baseline=compile_baseline,
                       limits=limits, plan=plan, secret=secret, gpu_index=gpu_index, timing_control=control)


def eval_options_from(value: Callable[[str], Any], **extra: Any):
    """EvalOptions from the option table's EVAL values, read with ``value(dest)``."""
    return eval_options(device=value("device"), precision=value("precision"), size=value("size"),
                        timing=not value("no_timing"), trials=value("trials"), tolerance=value("tolerance"),
                        allow_tf32=value("allow_tf32"), compile_baseline=value("compile_baseline"),
                        timing_budget_ms=value("timing_budget_ms"), **extra)
