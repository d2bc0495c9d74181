"""The small dataflow IR the builtin writer lowers a traced model into.

Values are either *materialized* (``Tensor``: a tensor that exists in ``forward`` as a Python
expression, such as an input, a parameter or the output of a PyTorch op kept as is), *scalars*
(``Scalar``: a literal or a Python expression evaluated in ``forward``), or *computed* by a
Triton kernel (``Pointwise``, ``Reduce``, ``Matmul``). The planner groups computed values into
kernels; the emitters write one kernel per group.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

_ids = itertools.count()


class NoRule(Exception):
    """The writer has no rule for part of the problem; ``what`` names that part."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


@dataclass(eq=False)
class Value:
    name: str
    shape: tuple[int, ...] | None
    dtype: Any = None  # a torch.dtype as traced
    uid: int = field(default_factory=lambda: next(_ids))

    @property
    def is_float(self) -> bool:
        return self.dtype is not None and self.dtype.is_floating_point


@dataclass(eq=False)
class Tensor(Value):
    """A tensor ``forward`` already holds: ``expr`` is how to name it there."""

    expr: str = ""


@dataclass(eq=False)
class Scalar(Value):
    """A number: ``literal`` when known at write time, else ``expr`` evaluated in ``forward``."""

    literal: float | int | bool | None = None
    expr: str = ""

    @property
    def is_literal(self) -> bool:
        return not self.expr


@dataclass(eq=False)
class Pointwise(Value):
    """Elementwise ``op`` over ``inputs`` (tensors broadcast numpy-style, scalars)."""

    op: str = ""
    inputs: list[Value] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Axis:
    """Which elements one reduction row covers.

    ``dims``: a contiguous run of dimensions of the input (rows are the other coordinates).
    ``groups``: GroupNorm's rows, ``leading * groups`` of them, each a contiguous run of the
    flattened tensor; ``groups`` is a Scalar giving the group count at run time.
    """

    dims: tuple[int, ...] = ()
    groups: Any = None


@dataclass(eq=False)
class Reduce(Value):
    """A row reduction: ``kind`` is sum, max, min, argmax or argmin over ``axis`` of ``input``.

    ``count_offset`` turns a sum into a mean: the sum is divided by ``R - count_offset`` where R
    is the row length (0 for a mean, 1 for an unbiased variance)."""

    kind: str = "sum"
    input: Value | None = None
    axis: Axis = Axis()
    keepdim: bool = False
    count_offset: int | None = None


@dataclass(eq=False)
class Scan(Value):
    """An inclusive prefix scan (``kind`` cumsum or cumprod) of ``input`` along ``axis`` (one dim)."""

    kind: str = "cumsum"
    input: Value | None = None
    axis: Axis = Axis()


@dataclass(eq=False)
class Matmul(Value):
    """``a @ b`` in fp32 accumulation; ``layout`` 'linear' means b is a (N, K) weight used transposed."""

    a: Value | None = None
    b: Value | None = None
    layout: str = "matmul"


def tensor_inputs(value: Value) -> list[Value]:
    """The values ``value`` reads, scalars included, in order."""
    if isinstance(value, Pointwise):
        attrs = [a for a in value.attrs.values() if isinstance(a, Value)]
        return list(value.inputs) + attrs
    if isinstance(value, Reduce):
        extra = [value.axis.groups] if isinstance(value.axis.groups, Value) else []
        return [value.input, *extra]
    if isinstance(value, Scan):
        return [value.input]
    if isinstance(value, Matmul):
        return [value.a, value.b]
    return []


def is_computed(value: Value) -> bool:
    return isinstance(value, (Pointwise, Reduce, Scan, Matmul))


def keepdim_shape(shape: tuple[int, ...], dims: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(1 if d in dims else s for d, s in enumerate(shape))


def reduced_shape(shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return keepdim_shape(shape, dims)
    return tuple(s for d, s in enumerate(shape) if d not in dims)


def broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """numpy broadcasting of shapes; NoRule when they do not broadcast."""
    rank = max((len(s) for s in shapes), default=0)
    result = []
    for position in range(rank):
        sizes = {s[len(s) - rank + position] for s in shapes if len(s) - rank + position >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            raise NoRule(f"shapes that do not broadcast: {shapes}")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)
