"""Precisions, tolerances and the backend flags that must match between reference and candidate."""

from __future__ import annotations

from typing import Any

from harness.errors import UserError

PRECISIONS = ("fp32", "fp16", "bf16")
# Upstream KernelBench's tolerances since late 2025: atol = rtol = 1e-4 for fp32, 1e-2 for half types.
DEFAULT_TOLERANCE = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 1e-2}


def torch_dtype(precision: str):
    import torch

    try:
        return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[precision]
    except KeyError:
        raise UserError(f"--precision {precision!r} is not supported; use one of: {', '.join(PRECISIONS)}") from None


def tolerance(precision: str, override: float | None = None) -> float:
    return override if override is not None else DEFAULT_TOLERANCE[precision]


def cast_value(value: Any, dtype, device):
    """Move a tensor to the device; cast it only if it is floating (never integers or booleans)."""
    import torch

    if isinstance(value, torch.Tensor):
        value = value.to(device)
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, (list, tuple)):
        return type(value)(cast_value(v, dtype, device) for v in value)
    return value


def backend_flags(precision: str, allow_tf32: bool = False) -> dict[str, bool]:
    """The flags both sides run with: TF32 stays off for fp32 unless asked (it changes results)."""
    return {"allow_tf32": bool(allow_tf32), "cudnn_deterministic": False}


def apply_backend_flags(flags: dict[str, bool]) -> None:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = flags["allow_tf32"]
    torch.backends.cudnn.allow_tf32 = flags["allow_tf32"]
    torch.set_float32_matmul_precision("high" if flags["allow_tf32"] else "highest")
