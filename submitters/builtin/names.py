"""Names the lowering and the decompositions share: Python names for fx values, attribute paths
into the model, and the pair ``torch.max(x, dim)`` returns. Their own module, so that ``lower``
and ``decompose`` do not import each other."""

from __future__ import annotations

from dataclasses import dataclass

from submitters.builtin.ir import Value

_RESERVED = {"torch", "triton", "tl", "nn", "F", "math", "self", "ModelNew"}


@dataclass
class ReduceTuple:
    """``torch.max(x, dim)``'s (values, indices) pair; each half is built when it is used."""

    input: Value
    dims: tuple
    keepdim: bool
    kind: str


def python_name(name: str) -> str:
    return name + "_v" if name in _RESERVED else name


def attribute_path(target: str) -> str:
    """``features.0.weight`` -> ``getattr(self.features, '0').weight``: ``getattr`` reaches a numbered
    or oddly named submodule in any holder (Sequential, ModuleList, ModuleDict or a plain Module)."""
    text = "self"
    for part in target.split("."):
        text = f"{text}.{part}" if part.isidentifier() else f"getattr({text}, {part!r})"
    return text
