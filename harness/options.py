"""Typed option parsers shared by the CLI and the pytest plugin: each quotes the bad value and the fix."""

from __future__ import annotations

import os

from harness.errors import UserError

DEVICES = ("cpu", "cuda")
SIZES = ("full", "small")
PRECISIONS = ("fp32", "fp16", "bf16")
ON_OFF_AUTO = ("on", "off", "auto")


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


def positive_int(name: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise UserError(f"{name} {text!r} is not a whole number") from None
        if value < 1:
            raise UserError(f"{name} {text!r} must be at least 1")
        return value

    return parse


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


def eval_options(device="cpu", precision="fp32", size="small", timing=True, trials=5, tolerance=None,
                 allow_tf32=False, compile_baseline="auto", timing_budget_ms=None, memory_gb=None, secret=None,
                 gpu_index=None):
    """EvalOptions from already-parsed option values (device availability checked here)."""
    from harness.device import check_device
    from harness.evaluate import EvalOptions
    from harness.judge import WorkerLimits
    from harness.stats import StopRule
    from harness.timing import TimingPlan

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
