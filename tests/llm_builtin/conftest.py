"""Fixtures for the builtin writer's tests: write a kernel for an inline reference, import both
files from disk (Triton's interpreter reads kernel source from files) and compare the outputs."""

from __future__ import annotations

import os

# Before anything imports triton: the kernels run in Triton's CPU interpreter.
os.environ.setdefault("TRITON_INTERPRET", "1")

import importlib.util  # noqa: E402
import itertools  # noqa: E402
from dataclasses import dataclass  # noqa: E402

import pytest  # noqa: E402

_modules = itertools.count()


@dataclass
class Outcome:
    source: str           # the generated ModelNew file
    kernels: list[str]    # one summary per kernel
    max_error: float      # largest absolute difference over all outputs
    close: bool           # within atol = rtol = 1e-4, shapes and dtypes equal
    reference_keys: list[str]
    candidate_keys: list[str]


def _import(path):
    spec = importlib.util.spec_from_file_location(f"builtin_test_module_{next(_modules)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compare(expected, received, tolerance: float = 1e-4) -> tuple[bool, float]:
    import torch

    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    received = list(received) if isinstance(received, (tuple, list)) else [received]
    close, worst = len(expected) == len(received), 0.0
    for want, got in zip(expected, received):
        if want.shape != got.shape or want.dtype != got.dtype:
            return False, float("inf")
        if want.numel():
            worst = max(worst, (want.double() - got.double()).abs().max().item())
        close = close and torch.allclose(want.double(), got.double(), atol=tolerance, rtol=tolerance)
    return close, worst


@pytest.fixture
def run_builtin(tmp_path):
    """``run_builtin(reference_source, variant="default") -> Outcome``: write, run both, compare."""

    def run(reference: str, variant: str = "default", seed: int = 1, evaluate_with: str | None = None,
            patch: dict | None = None, dtype=None) -> Outcome:
        """``evaluate_with``: another version of the reference (other sizes) to run the kernel against;
        ``patch``: attributes to replace in the generated module (its launch-time decisions);
        ``dtype``: a half precision to run both models in (compared at 1e-2, as the harness does)."""
        import torch

        from submitters.builtin.writer import write

        written = write(reference, variant)
        (tmp_path / "reference.py").write_text(evaluate_with or reference)
        (tmp_path / f"candidate_{variant}.py").write_text(written.source)
        ref = _import(tmp_path / "reference.py")
        cand = _import(tmp_path / f"candidate_{variant}.py")
        for name, value in (patch or {}).items():
            assert hasattr(cand, name), f"the generated module has no {name}"
            setattr(cand, name, value)
        init = ref.get_init_inputs() if hasattr(ref, "get_init_inputs") else []
        torch.manual_seed(0)
        model = ref.Model(*init)
        torch.manual_seed(123)  # a different seed: weights must come from the state_dict, not the RNG
        new = cand.ModelNew(*init)
        new.load_state_dict(model.state_dict(), strict=True)
        torch.manual_seed(seed)
        inputs = ref.get_inputs()
        if dtype is not None:
            model, new = model.to(dtype), new.to(dtype)
            inputs = [x.to(dtype) if x.is_floating_point() else x for x in inputs]
        with torch.no_grad():
            expected = model(*inputs)
            received = new(*inputs)
        close, worst = _compare(expected, received, 1e-4 if dtype is None else 1e-2)
        return Outcome(written.source, written.kernels, worst, close, sorted(model.state_dict()),
                       sorted(new.state_dict()))

    return run
