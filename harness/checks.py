"""Correctness checks on the judge's side: verdicts with bounded, readable reasons."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_REPORTED = 5


@dataclass
class CheckResult:
    ok: bool
    reason: str = ""
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    mismatches: int = 0
    details: list[str] = field(default_factory=list)


def flatten_outputs(output: Any) -> list | None:
    """A list of tensors from a tensor or a (nested) tuple/list of tensors; None if anything else."""
    import torch

    if type(output) is torch.Tensor:  # exactly a plain tensor: subclasses can do work lazily
        return [output]
    if isinstance(output, (tuple, list)):
        flat = []
        for item in output:
            inner = flatten_outputs(item)
            if inner is None:
                return None
            flat += inner
        return flat
    return None


def compare_outputs(expected: list, received: list, atol: float, rtol: float) -> CheckResult:
    if len(expected) != len(received):
        return CheckResult(False, f"expected {len(expected)} output tensor(s), got {len(received)}")
    worst = CheckResult(True)
    for index, (want, got) in enumerate(zip(expected, received)):
        result = compare_tensors(want, got, atol, rtol, label=f"output {index}" if len(expected) > 1 else "output")
        if not result.ok:
            return result
        worst.max_abs_err = max(worst.max_abs_err, result.max_abs_err)
        worst.max_rel_err = max(worst.max_rel_err, result.max_rel_err)
    return worst


def compare_tensors(want, got, atol: float, rtol: float, label: str = "output") -> CheckResult:
    """Shape, dtype, exact NaN/Inf positions, then every element within atol + rtol * |expected|."""
    import torch

    if tuple(got.shape) != tuple(want.shape):
        return CheckResult(False, f"{label}: shape {tuple(got.shape)}, expected {tuple(want.shape)}")
    if got.dtype != want.dtype:
        return CheckResult(False, f"{label}: dtype {got.dtype}, expected {want.dtype}")
    got = got.to(want.device)
    if not want.is_floating_point() and not want.is_complex():
        mismatch = got != want
        return _report(mismatch, want, got, label, 0.0, 0.0, "values differ")
    # Half types are compared in float32 so the tolerance itself is not rounded.
    work = torch.float32 if want.element_size() < 4 else want.dtype
    want_w, got_w = want.to(work), got.to(work)
    close = torch.isclose(got_w, want_w, rtol=rtol, atol=atol, equal_nan=True)
    finite = torch.isfinite(want_w) & torch.isfinite(got_w)
    diff = torch.where(finite, (got_w - want_w).abs(), torch.zeros((), dtype=work, device=want.device))
    max_abs = float(diff.max()) if diff.numel() else 0.0
    max_rel = float((diff / want_w.abs().clamp_min(1e-12)).max()) if diff.numel() else 0.0
    if bool(close.all()):
        return CheckResult(True, max_abs_err=max_abs, max_rel_err=max_rel)
    special = _special_mismatch(want_w, got_w)
    if bool(special.any()):
        return _report(special, want, got, label, max_abs, max_rel, "NaN/Inf positions differ")
    return _report(~close, want, got, label, max_abs, max_rel, f"values differ beyond atol={atol:g}, rtol={rtol:g}")


def _special_mismatch(want, got):
    import torch

    return (torch.isnan(want) != torch.isnan(got)) | (torch.isposinf(want) != torch.isposinf(got)) | (
        torch.isneginf(want) != torch.isneginf(got))


def _report(mismatch, want, got, label, max_abs, max_rel, what) -> CheckResult:
    count = int(mismatch.sum())
    if count == 0:
        return CheckResult(True, max_abs_err=max_abs, max_rel_err=max_rel)
    indices = mismatch.nonzero()[:MAX_REPORTED].tolist()
    details = [f"at {tuple(i)}: expected {want[tuple(i)].item():.6g}, got {got[tuple(i)].item():.6g}" for i in indices]
    if count > MAX_REPORTED:
        details.append(f"... and {count - MAX_REPORTED} more")
    total = mismatch.numel()
    reason = f"{label}: {what}: {count} of {total} elements ({100.0 * count / total:.3g}%); max abs err {max_abs:.3g}"
    return CheckResult(False, reason, max_abs, max_rel, count, details)


class DegeneracyProbe:
    """Which trivial answers would pass every trial: zeros, the output's mean, an input passed through.

    Fed one trial at a time (nothing is kept, so full-size problems cost no extra memory). A
    non-empty ``found()`` marks the problem degenerate: a 'correct' result on it proves little.
    """

    def __init__(self, atol: float, rtol: float):
        self.atol, self.rtol = atol, rtol
        self.alive = {"zeros": True, "constant": True, "passthrough": True, "input_independent": True}
        self.trials = 0
        self.previous: list | None = None   # the last trial's expected outputs

    def update(self, expected: list, inputs: list) -> None:
        import torch

        self.trials += 1
        # An output that does not depend on the input: the last trial's answer passes this one.
        previous, self.previous = self.previous, expected
        if previous is not None and self.alive["input_independent"]:
            self.alive["input_independent"] = compare_outputs(expected, previous, self.atol, self.rtol).ok
        for want in expected:
            if not want.is_floating_point():
                self.alive = dict.fromkeys(self.alive, False)
                return
            guesses = {"zeros": lambda: torch.zeros_like(want),
                       # a single number is its own mean: only a larger output can be "constant"
                       "constant": lambda: torch.full_like(want, float(want.double().mean()))
                       if want.numel() > 1 and bool(torch.isfinite(want).all()) else None,
                       "passthrough": lambda: _matching_input(inputs, want) if len(expected) == 1 else None}
            for name, make in guesses.items():
                if self.alive[name]:
                    guess = make()
                    self.alive[name] = guess is not None and compare_tensors(want, guess, self.atol, self.rtol).ok

    def found(self) -> list[str]:
        if not self.trials:
            return []
        return [name for name, alive in self.alive.items() if alive and (name != "input_independent" or self.trials > 1)]


def degeneracy(expected_trials: list[list], inputs_trials: list[list], atol: float, rtol: float) -> list[str]:
    """The probe over already collected trials (see DegeneracyProbe)."""
    probe = DegeneracyProbe(atol, rtol)
    for expected, inputs in zip(expected_trials, inputs_trials):
        probe.update(expected, inputs)
    return probe.found()


def _matching_input(inputs: list, want):
    import torch

    for tensor in inputs:
        if isinstance(tensor, torch.Tensor) and tensor.shape == want.shape and tensor.dtype == want.dtype:
            return tensor
    return None
