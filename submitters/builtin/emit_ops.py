"""Triton expressions for the elementwise ops, computed in fp32.

``expression(op, args, attrs)`` returns the Triton source of one op over already-loaded fp32 (or
boolean) values; multi-line math lives in small ``@triton.jit`` helpers (``HELPERS``) that a
generated file includes when one of its kernels calls them.
"""

from __future__ import annotations

import math
from typing import Any

from submitters.builtin.ir import NoRule

HELPERS = {
    "_tanh": '''@triton.jit
def _tanh(x):
    # exp of a non-positive number never overflows; the sign is restored afterwards
    e = tl.exp(-2.0 * tl.abs(x))
    t = (1.0 - e) / (1.0 + e)
    return tl.where(x >= 0, t, -t)
''',
    "_softplus": '''@triton.jit
def _softplus(x, beta, threshold):
    z = x * beta
    soft = (tl.maximum(z, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(z)))) / beta
    return tl.where(z > threshold, x, soft)
''',
    "_gelu": '''@triton.jit
def _gelu(x):
    return 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
''',
    "_gelu_tanh": '''@triton.jit
def _gelu_tanh(x):
    return 0.5 * x * (1.0 + _tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
''',
    "_powf": '''@triton.jit
def _powf(x, e):
    # |x|**e through exp2/log2, then the sign rules of pow for negative bases
    magnitude = tl.exp2(e * tl.log2(tl.abs(x)))
    integral = e == tl.floor(e)
    odd = integral & ((e - 2.0 * tl.floor(e * 0.5)) == 1.0)
    signed = tl.where(odd, -magnitude, magnitude)
    return tl.where(x < 0, tl.where(integral, signed, float("nan")), magnitude)
''',
    "_xlogx": '''@triton.jit
def _xlogx(x):
    return tl.where(x == 0, 0.0, x * tl.log(x))
''',
}
# Helpers that call other helpers.
HELPER_DEPENDS = {"_gelu_tanh": ("_tanh",)}

_BOOL_RESULT = {"gt", "lt", "ge", "le", "eq", "ne", "logical_and", "logical_or", "logical_not"}
_COMPARE = {"gt": ">", "lt": "<", "ge": ">=", "le": "<=", "eq": "==", "ne": "!="}
_BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/"}

_UNARY = {
    "identity": "{x}", "relu": "tl.maximum({x}, 0.0)", "relu6": "tl.minimum(tl.maximum({x}, 0.0), 6.0)",
    "sigmoid": "tl.sigmoid({x})", "tanh": "_tanh({x})", "exp": "tl.exp({x})", "exp2": "tl.exp2({x})",
    "expm1": "(tl.exp({x}) - 1.0)", "log": "tl.log({x})", "log2": "tl.log2({x})", "log1p": "tl.log(1.0 + {x})",
    "sqrt": "tl.sqrt({x})", "rsqrt": "tl.rsqrt({x})", "abs": "tl.abs({x})", "neg": "(-{x})",
    "reciprocal": "(1.0 / {x})", "sin": "tl.sin({x})", "cos": "tl.cos({x})", "erf": "tl.erf({x})",
    "sign": "tl.where({x} > 0, 1.0, tl.where({x} < 0, -1.0, 0.0))", "floor": "tl.floor({x})",
    "ceil": "tl.ceil({x})", "trunc": "tl.where({x} >= 0, tl.floor({x}), tl.ceil({x}))", "square": "({x} * {x})",
    "silu": "({x} * tl.sigmoid({x}))", "mish": "({x} * _tanh(_softplus({x}, 1.0, 20.0)))",
    "selu": "(1.0507009873554805 * tl.where({x} > 0, {x}, 1.6732632423543772 * (tl.exp({x}) - 1.0)))",
    "hardsigmoid": "(tl.minimum(tl.maximum({x} + 3.0, 0.0), 6.0) / 6.0)",
    "hardswish": "({x} * tl.minimum(tl.maximum({x} + 3.0, 0.0), 6.0) / 6.0)",
    "softsign": "({x} / (1.0 + tl.abs({x})))",
    "logsigmoid": "(tl.minimum({x}, 0.0) - tl.log(1.0 + tl.exp(-tl.abs({x}))))",
    "tanhshrink": "({x} - _tanh({x}))", "logical_not": "({x} == 0)",
}
_WITH_ATTRS = {
    "leaky_relu": "tl.where({x} >= 0, {x}, {x} * {negative_slope})",
    "elu": "tl.where({x} > 0, {x}, {alpha} * (tl.exp({x}) - 1.0))",
    "celu": "(tl.maximum({x}, 0.0) + tl.minimum(0.0, {alpha} * (tl.exp({x} / {alpha}) - 1.0)))",
    "hardtanh": "tl.minimum(tl.maximum({x}, {min_val}), {max_val})",
    "softplus": "_softplus({x}, {beta}, {threshold})",
    "softshrink": "tl.where({x} > {lambd}, {x} - {lambd}, tl.where({x} < -{lambd}, {x} + {lambd}, 0.0))",
    "hardshrink": "tl.where(({x} > {lambd}) | ({x} < -{lambd}), {x}, 0.0)",
    "threshold": "tl.where({x} > {threshold}, {x}, {value})",
    "clamp_min": "tl.maximum({x}, {min})",
    "clamp_max": "tl.minimum({x}, {max})",
    "huber": "tl.where(tl.abs({x}) < {delta}, 0.5 * {x} * {x}, {delta} * (tl.abs({x}) - 0.5 * {delta}))",
}


def result_is_bool(op: str) -> bool:
    return op in _BOOL_RESULT


def wants_bool(op: str) -> bool:
    """Ops whose (first) inputs are conditions."""
    return op in ("logical_and", "logical_or", "logical_not", "where")


def expression(op: str, args: list[str], attrs: dict[str, str], raw: dict[str, Any], coordinate: Any = None) -> str:
    """Triton source for ``op``; ``attrs`` are formatted scalars, ``raw`` their literal values (or None);
    ``coordinate(d)`` gives the index expression of each element along dim d of the stage."""
    if op in _UNARY:
        return _UNARY[op].format(x=args[0])
    if op in _WITH_ATTRS:
        return _WITH_ATTRS[op].format(x=args[0], **attrs)
    if op in _BINARY:
        return f"({args[0]} {_BINARY[op]} {args[1]})"
    if op in _COMPARE:
        return f"({args[0]} {_COMPARE[op]} {args[1]})"
    special = _SPECIAL.get(op)
    if special is None:
        raise NoRule(f"the elementwise op {op}")
    return special(args, attrs, raw, coordinate)


def helpers_used(source: str) -> list[str]:
    """The helper names a kernel body calls, with their dependencies, in definition order."""
    needed = {name for name in HELPERS if f"{name}(" in source}
    for name in list(needed):
        needed.update(HELPER_DEPENDS.get(name, ()))
    return [name for name in HELPERS if name in needed]


def literal(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return f"{float(value)!r}"
    if isinstance(value, float):
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return repr(value)
    raise NoRule(f"a constant of type {type(value).__name__}")


def _gelu(args, attrs, raw, coords):
    mode = raw.get("approximate") or "none"
    if mode not in ("none", "tanh"):
        raise NoRule(f"gelu with approximate={mode!r}")
    return f"_gelu({args[0]})" if mode == "none" else f"_gelu_tanh({args[0]})"


def _clamp(args, attrs, raw, coords):
    text = args[0]
    if "min" in attrs:
        text = f"tl.maximum({text}, {attrs['min']})"
    if "max" in attrs:
        text = f"tl.minimum({text}, {attrs['max']})"
    return text


def _pow_scalar(args, attrs, raw, coords):
    x, exponent = args[0], raw.get("exponent")
    table = {2.0: f"({x} * {x})", 3.0: f"({x} * {x} * {x})", 4.0: f"(({x} * {x}) * ({x} * {x}))", 1.0: x,
             0.5: f"tl.sqrt({x})", -0.5: f"tl.rsqrt({x})", -1.0: f"(1.0 / {x})", -2.0: f"(1.0 / ({x} * {x}))",
             0.0: f"({x} * 0.0 + 1.0)"}
    if isinstance(exponent, (int, float)) and not isinstance(exponent, bool) and float(exponent) in table:
        return table[float(exponent)]
    return f"_powf({x}, {attrs['exponent']})"


def _rpow(args, attrs, raw, coords):
    return f"tl.exp2({args[0]} * {literal(math.log2(float(raw['base'])))})"


def _smooth_l1(args, attrs, raw, coords):
    x, beta = args[0], attrs["beta"]
    if raw.get("beta") == 0:
        return f"tl.abs({x})"
    return f"tl.where(tl.abs({x}) < {beta}, 0.5 * {x} * {x} / {beta}, tl.abs({x}) - 0.5 * {beta})"


def _triangle(upper: bool):
    def emit(args, attrs, raw, coordinate):
        row, col = coordinate(-2), coordinate(-1)
        test = ">=" if upper else "<="
        return f"tl.where(({col} - {row}) {test} {attrs['diagonal']}, {args[0]}, 0.0)"
    return emit


def _coord(args, attrs, raw, coordinate):
    """The index of each element along one dim (its input only lends the shape)."""
    return f"{coordinate(int(raw['dim']))}.to(tl.float32)"


_SPECIAL = {
    "gelu": _gelu, "clamp": _clamp, "pow_scalar": _pow_scalar, "rpow": _rpow, "smooth_l1": _smooth_l1,
    "maximum": lambda a, *_: f"tl.maximum({a[0]}, {a[1]})", "minimum": lambda a, *_: f"tl.minimum({a[0]}, {a[1]})",
    "fmax": lambda a, *_: f"tl.maximum({a[0]}, {a[1]})", "fmin": lambda a, *_: f"tl.minimum({a[0]}, {a[1]})",
    "floor_divide": lambda a, *_: f"tl.floor({a[0]} / {a[1]})",
    "trunc_divide": lambda a, *_: f"tl.where(({a[0]} / {a[1]}) >= 0, tl.floor({a[0]} / {a[1]}), tl.ceil({a[0]} / {a[1]}))",
    "where": lambda a, *_: f"tl.where({a[0]}, {a[1]}, {a[2]})",
    "logical_and": lambda a, *_: f"({a[0]} & {a[1]})", "logical_or": lambda a, *_: f"({a[0]} | {a[1]})",
    "kl_div": lambda a, *_: f"(_xlogx({a[1]}) - {a[1]} * {a[0]})",
    "kl_div_log_target": lambda a, *_: f"(tl.exp({a[1]}) * ({a[1]} - {a[0]}))",
    "triu": _triangle(True), "tril": _triangle(False), "coord": _coord,
}
