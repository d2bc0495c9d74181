"""What the writer recognises: the canonical name of each traced call and its argument list.

A traced fx node is a function call (``torch.relu``, ``operator.add``), a method call
(``x.relu()``) or a module call (``self.act(x)``); all three map to one canonical op name here,
and ``bind`` turns the call's positional and keyword arguments into one dict by parameter name.
"""

from __future__ import annotations

import builtins
import operator
from functools import lru_cache
from typing import Any

REQUIRED = object()

# Elementwise ops: canonical name -> parameters after the input (name, default).
UNARY = {
    "relu": (), "relu6": (), "sigmoid": (), "tanh": (), "exp": (), "exp2": (), "expm1": (), "log": (),
    "log2": (), "log1p": (), "sqrt": (), "rsqrt": (), "abs": (), "neg": (), "reciprocal": (), "sin": (),
    "cos": (), "erf": (), "sign": (), "floor": (), "ceil": (), "trunc": (), "square": (), "silu": (),
    "mish": (), "selu": (), "hardswish": (), "hardsigmoid": (), "softsign": (), "logsigmoid": (),
    "tanhshrink": (), "identity": (), "logical_not": (),
    "gelu": (("approximate", "none"),),
    "leaky_relu": (("negative_slope", 0.01),),
    "elu": (("alpha", 1.0),),
    "celu": (("alpha", 1.0),),
    "hardtanh": (("min_val", -1.0), ("max_val", 1.0)),
    "softplus": (("beta", 1.0), ("threshold", 20.0)),
    "softshrink": (("lambd", 0.5),),
    "hardshrink": (("lambd", 0.5),),
    "threshold": (("threshold", REQUIRED), ("value", REQUIRED)),
    "clamp": (("min", None), ("max", None)),
    "clamp_min": (("min", REQUIRED),),
    "clamp_max": (("max", REQUIRED),),
    "triu": (("diagonal", 0),),
    "coord": (("dim", REQUIRED),),
    "tril": (("diagonal", 0),),
}
BINARY = {
    "add": (("alpha", 1),), "sub": (("alpha", 1),), "rsub": (("alpha", 1),), "mul": (),
    "div": (("rounding_mode", None),), "pow": (), "maximum": (), "minimum": (), "fmax": (), "fmin": (),
    "gt": (), "lt": (), "ge": (), "le": (), "eq": (), "ne": (), "logical_and": (), "logical_or": (),
}
# Reductions and the ops decomposed into reductions: parameters after the input.
REDUCTIONS = {
    "sum": (("dim", None), ("keepdim", False), ("dtype", None)),
    "mean": (("dim", None), ("keepdim", False), ("dtype", None)),
    "amax": (("dim", ()), ("keepdim", False)),
    "amin": (("dim", ()), ("keepdim", False)),
    "max": (("dim", None), ("keepdim", False)),
    "min": (("dim", None), ("keepdim", False)),
    "argmax": (("dim", None), ("keepdim", False)),
    "argmin": (("dim", None), ("keepdim", False)),
    "logsumexp": (("dim", REQUIRED), ("keepdim", False)),
    "softmax": (("dim", None), ("_stacklevel", 3), ("dtype", None)),
    "log_softmax": (("dim", None), ("_stacklevel", 3), ("dtype", None)),
    "softmin": (("dim", None), ("_stacklevel", 3), ("dtype", None)),
    "norm": (("p", "fro"), ("dim", None), ("keepdim", False), ("dtype", None)),
    "vector_norm": (("ord", 2), ("dim", None), ("keepdim", False)),
    "var": (("dim", None), ("unbiased", None), ("keepdim", False), ("correction", None)),
    "std": (("dim", None), ("unbiased", None), ("keepdim", False), ("correction", None)),
    "normalize": (("p", 2.0), ("dim", 1), ("eps", 1e-12)),
    "layer_norm": (("normalized_shape", REQUIRED), ("weight", None), ("bias", None), ("eps", 1e-5)),
    "group_norm": (("num_groups", REQUIRED), ("weight", None), ("bias", None), ("eps", 1e-5)),
    "instance_norm": (("running_mean", None), ("running_var", None), ("weight", None), ("bias", None),
                      ("use_input_stats", True), ("momentum", 0.1), ("eps", 1e-5)),
    "rms_norm": (("normalized_shape", REQUIRED), ("weight", None), ("eps", None)),
}
LOSSES = {
    "mse_loss": (("target", REQUIRED), ("size_average", None), ("reduce", None), ("reduction", "mean")),
    "l1_loss": (("target", REQUIRED), ("size_average", None), ("reduce", None), ("reduction", "mean")),
    "smooth_l1_loss": (("target", REQUIRED), ("size_average", None), ("reduce", None), ("reduction", "mean"),
                       ("beta", 1.0)),
    "huber_loss": (("target", REQUIRED), ("reduction", "mean"), ("delta", 1.0)),
    "kl_div": (("target", REQUIRED), ("size_average", None), ("reduce", None), ("reduction", "mean"),
               ("log_target", False)),
    "cross_entropy": (("target", REQUIRED), ("weight", None), ("size_average", None), ("ignore_index", -100),
                      ("reduce", None), ("reduction", "mean"), ("label_smoothing", 0.0)),
    "triplet_margin_loss": (("positive", REQUIRED), ("negative", REQUIRED), ("margin", 1.0), ("p", 2.0),
                            ("eps", 1e-6), ("swap", False), ("size_average", None), ("reduce", None),
                            ("reduction", "mean")),
}
SCANS = {
    "cumsum": (("dim", REQUIRED), ("dtype", None)),
    "cumprod": (("dim", REQUIRED), ("dtype", None)),
}
MATMULS = {
    "matmul": (("other", REQUIRED),),
    "linear": (("weight", REQUIRED), ("bias", None)),
    "einsum": (),
}
# Identity for the values the writer sees (copies and dtype no-ops): the alias keeps its input.
IDENTITIES = {"clone", "detach", "contiguous", "identity_alias"}
# Calls that stay in PyTorch: layout changes, tensor factories and the heavy "anchor" ops
# (convolutions, pooling, batch norm) whose cuDNN/ATen implementations the writer keeps.
VIEWS = {
    "view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose", "t", "expand",
    "expand_as", "narrow", "select", "split", "chunk", "unbind", "cat", "concat", "concatenate", "stack",
    "movedim", "swapaxes", "flip", "repeat", "getitem", "view_as", "reshape_as", "roll", "unfold",
}
FACTORIES = {"zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like", "arange", "tensor"}
ANCHOR_FUNCTIONS = {
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "max_pool1d",
    "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "adaptive_max_pool3d", "batch_norm", "dropout", "dropout1d", "dropout2d", "dropout3d", "interpolate", "pad",
    "pixel_shuffle", "pixel_unshuffle", "embedding", "upsample", "scaled_dot_product_attention",
}
ANCHOR_MODULES = (
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "MaxPool1d",
    "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "BatchNorm1d",
    "BatchNorm2d", "BatchNorm3d", "Upsample", "PixelShuffle", "PixelUnshuffle", "Embedding", "ZeroPad2d",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad2d", "Flatten", "Unflatten", "LSTM", "GRU", "RNN",
    "MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
)

_OPERATOR_NAMES = {
    operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "div", operator.neg: "neg",
    operator.pow: "pow", operator.matmul: "matmul", operator.gt: "gt", operator.lt: "lt", operator.ge: "ge",
    operator.le: "le", operator.eq: "eq", operator.ne: "ne", operator.getitem: "getitem", operator.abs: "abs",
    operator.and_: "logical_and", operator.or_: "logical_or", operator.invert: "logical_not",
    operator.floordiv: "floordiv", operator.mod: "mod", builtins.getattr: "getattr",
}
_ALIASES = {
    "subtract": "sub", "multiply": "mul", "divide": "div", "true_divide": "div", "clip": "clamp",
    "negative": "neg", "swish": "silu", "concat": "cat", "greater": "gt", "less": "lt", "bmm": "matmul",
    "mm": "matmul", "__add__": "add", "__radd__": "add", "__mul__": "mul", "__rmul__": "mul", "__sub__": "sub",
    "__rsub__": "rsub", "__truediv__": "div", "__neg__": "neg", "__pow__": "pow", "__matmul__": "matmul",
    "absolute": "abs", "arctan": "atan", "clamp_": "clamp",
}
_MODULE_OPS = {
    "ReLU": "relu", "ReLU6": "relu6", "Sigmoid": "sigmoid", "Tanh": "tanh", "GELU": "gelu", "SiLU": "silu",
    "Mish": "mish", "Hardswish": "hardswish", "Hardsigmoid": "hardsigmoid", "ELU": "elu", "SELU": "selu",
    "CELU": "celu", "LeakyReLU": "leaky_relu", "Hardtanh": "hardtanh", "Softplus": "softplus",
    "Softsign": "softsign", "LogSigmoid": "logsigmoid", "Tanhshrink": "tanhshrink", "Softshrink": "softshrink",
    "Hardshrink": "hardshrink", "Threshold": "threshold", "Identity": "identity_alias", "Softmax": "softmax",
    "LogSoftmax": "log_softmax", "Softmin": "softmin", "LayerNorm": "layer_norm", "GroupNorm": "group_norm",
    "InstanceNorm1d": "instance_norm", "InstanceNorm2d": "instance_norm", "InstanceNorm3d": "instance_norm",
    "RMSNorm": "rms_norm", "Linear": "linear", "Dropout": "dropout", "Dropout1d": "dropout",
    "Dropout2d": "dropout", "Dropout3d": "dropout", "AlphaDropout": "dropout", "MSELoss": "mse_loss",
    "L1Loss": "l1_loss", "SmoothL1Loss": "smooth_l1_loss", "HuberLoss": "huber_loss", "KLDivLoss": "kl_div",
    "TripletMarginLoss": "triplet_margin_loss", "CrossEntropyLoss": "cross_entropy",
}
# Module attributes that stand for the functional form's parameters.
MODULE_PARAMS = {
    "gelu": {"approximate": "approximate"}, "leaky_relu": {"negative_slope": "negative_slope"},
    "elu": {"alpha": "alpha"}, "celu": {"alpha": "alpha"}, "hardtanh": {"min_val": "min_val", "max_val": "max_val"},
    "softplus": {"beta": "beta", "threshold": "threshold"}, "softshrink": {"lambd": "lambd"},
    "hardshrink": {"lambd": "lambd"}, "threshold": {"threshold": "threshold", "value": "value"},
    "softmax": {"dim": "dim"}, "log_softmax": {"dim": "dim"}, "softmin": {"dim": "dim"},
    "smooth_l1_loss": {"reduction": "reduction", "beta": "beta"}, "huber_loss": {"reduction": "reduction", "delta": "delta"},
    "mse_loss": {"reduction": "reduction"}, "l1_loss": {"reduction": "reduction"},
    "kl_div": {"reduction": "reduction", "log_target": "log_target"},
    "cross_entropy": {"weight": "weight", "ignore_index": "ignore_index", "reduction": "reduction",
                      "label_smoothing": "label_smoothing"},
    "triplet_margin_loss": {"margin": "margin", "p": "p", "eps": "eps", "swap": "swap", "reduction": "reduction"},
}


def signature(op: str) -> tuple:
    for table in (UNARY, BINARY, REDUCTIONS, LOSSES, SCANS, MATMULS):
        if op in table:
            prefix = (("input", REQUIRED), ("other", REQUIRED)) if table is BINARY else (("input", REQUIRED),)
            return prefix + tuple(table[op])
    return ()


def bind(op: str, args: tuple, kwargs: dict) -> dict[str, Any]:
    """``args``/``kwargs`` of a call to ``op`` as {parameter: value}, defaults filled in."""
    params = signature(op)
    bound: dict[str, Any] = {}
    for (name, _default), value in zip(params, args):
        bound[name] = value
    for key, value in kwargs.items():
        bound[_KWARG_ALIASES.get(key, key)] = value
    for name, default in params:
        if name not in bound:
            if default is REQUIRED:
                raise TypeError(f"{op}: missing argument {name!r}")
            bound[name] = default
    return bound


_KWARG_ALIASES = {"axis": "dim", "exponent": "other", "self": "input", "lambda": "lambd"}


@lru_cache(maxsize=1)
def _torch_function_names() -> dict[int, str]:
    """id(function) -> canonical name for the torch and torch.nn.functional callables."""
    import torch
    import torch.nn.functional as F

    names: dict[int, str] = {}
    everything = set(UNARY) | set(BINARY) | set(REDUCTIONS) | set(LOSSES) | set(SCANS) | set(MATMULS) | IDENTITIES \
        | VIEWS \
        | FACTORIES | ANCHOR_FUNCTIONS | set(_ALIASES) | {"where", "einsum", "diag", "masked_fill"}
    for name in everything:
        canonical = _ALIASES.get(name, name)
        for home in (torch, F, torch.special, torch.linalg):
            function = getattr(home, name, None)
            if callable(function):
                names.setdefault(id(function), canonical)
    names[id(torch.nn.functional.linear)] = "linear"
    return names


def function_op(target: Any) -> str | None:
    if target in _OPERATOR_NAMES:
        return _OPERATOR_NAMES[target]
    return _torch_function_names().get(id(target))


def method_op(name: str) -> tuple[str, bool]:
    """(canonical op, in place) for a tensor method name such as ``add_`` or ``softmax``."""
    in_place = name.endswith("_") and not name.endswith("__")
    base = name[:-1] if in_place else name
    return _ALIASES.get(base, base), in_place


def module_op(module: Any) -> str | None:
    for klass in type(module).__mro__:
        if klass.__module__.startswith("torch.nn") and klass.__name__ in _MODULE_OPS:
            return _MODULE_OPS[klass.__name__]
        if klass.__module__.startswith("torch.nn") and klass.__name__ in ANCHOR_MODULES:
            return "anchor"
    return None
