"""Source text that rebuilds a ``torch.nn`` module, so a sub-problem can declare it like a problem file does.

``nn.Conv2d(4, 8, kernel_size=(3, 3), stride=(1, 1))`` is what ``repr`` prints for most built-in
layers, and it is also the call that builds them. That is checked, not assumed: the text is executed
(on the meta device, so nothing is allocated) and the result must have the same type, the same
hyperparameters (every plain attribute), and parameters and buffers of the same names, shapes and
dtypes. A module that fails the check has no constructor source (None), and whatever uses it stays in
PyTorch.
"""

from __future__ import annotations

from typing import Any


def constructor_source(module: Any) -> str | None:
    """``nn.<Type>(<args>)`` that rebuilds ``module`` (an ``nn.Sequential`` of such layers too), or None."""
    import torch.nn as nn

    if type(module) is nn.Sequential:
        return _sequential_source(module)
    if list(module.children()) or not type(module).__module__.startswith("torch.nn"):
        return None
    text = f"nn.{type(module).__name__}({module.extra_repr()})"
    return text if _rebuilds(module, text) else None


def _sequential_source(module: Any) -> str | None:
    names = [name for name, _ in module.named_children()]
    if names != [str(index) for index in range(len(names))]:
        return None
    parts = [constructor_source(child) for child in module.children()]
    if any(part is None for part in parts):
        return None
    return "nn.Sequential(" + ", ".join(parts) + ")"


def _rebuilds(module: Any, text: str) -> bool:
    import torch
    import torch.nn as nn

    try:
        with torch.device("meta"):
            rebuilt = eval(text, {"nn": nn, "torch": torch, "inf": float("inf"), "nan": float("nan")})  # noqa: S307 - our own repr text
    except Exception:  # a repr that is not a constructor call: no source for this module
        return False
    return type(rebuilt) is type(module) and _settings(rebuilt) == _settings(module) and \
        _tensor_layout(rebuilt) == _tensor_layout(module)


def _settings(module: Any) -> dict:
    """The module's plain attributes (hyperparameters), without tensors and private state."""
    import torch

    return {key: value for key, value in vars(module).items()
            if not key.startswith("_") and key != "training" and not isinstance(value, torch.Tensor)}


def _tensor_layout(module: Any) -> list[tuple]:
    state = module.state_dict(keep_vars=True)
    return [(key, tuple(value.shape), value.dtype) for key, value in state.items()]


def tensor_source(tensor: Any, fill: str) -> str:
    """``torch.<fill>(2, 3)`` (with a dtype when it is not float32) for declaring a parameter or buffer."""
    import torch

    shape = ", ".join(str(size) for size in tensor.shape) or "()"
    if fill == "randn" and not tensor.is_floating_point():
        fill = "zeros"
    dtype = "" if tensor.dtype == torch.float32 else f", dtype={tensor.dtype}"
    return f"torch.{fill}({shape}{dtype})"
