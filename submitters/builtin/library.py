"""Library kernels: whole-operator Triton templates for the ops the IR does not express.

Convolutions, pooling, batch norm and attention are not chains of elementwise ops and row
reductions, so instead of lowering them into the IR the writer keeps their call where it is in
``forward`` and points it at a pasted-in Triton implementation with the same signature
(``F.conv2d(x, w, b, 2, 1)`` becomes ``_tk_conv(x, w, b, 2, 1)``; ``self.conv(x)`` becomes
``_tk_conv_module(self.conv, x)``, which reads the module's geometry at run time so sizes are never
baked in). The planner treats their results like any materialized tensor: the elementwise chain
after a convolution is still fused into a kernel of its own.
"""

from __future__ import annotations

from typing import Any

from . import lib_conv, lib_norm_attention, lib_pool, lib_sequence

_FAMILIES = (lib_conv, lib_pool, lib_norm_attention, lib_sequence)

COMMON = '''
def _tk_tuple(value, rank):
    if isinstance(value, int):
        return (value,) * rank
    value = tuple(int(v) for v in value)
    return value * rank if len(value) == 1 else value


def _tk_3d(values, fill):
    # a 1-D or 2-D geometry as a 3-D one: leading spatial dims of size 1, stride 1, no padding
    return (fill,) * (3 - len(values)) + tuple(values)


def _tk_next_pow2(value, low, high):
    return max(low, min(high, triton.next_power_of_2(max(int(value), 1))))
'''

# functions whose torch.* form has another argument order than the F.* form the templates follow
_FUNCTIONAL_ONLY = {"batch_norm"}


def for_module(module: Any, node: Any = None) -> str | None:
    """The library function that replaces a call to ``module``, or None (it stays in PyTorch)."""
    name = type(module).__name__
    if not type(module).__module__.startswith("torch.nn"):
        return None
    if name == "MultiheadAttention" and node is not None and not _only_first_item_used(node):
        return None  # the attention weights are asked for: the template returns the output only
    for family in _FAMILIES:
        if name in family.MODULES and family.module_refusal(module) is None:
            return family.MODULES[name]
    return None


def for_function(op: str, target: Any, args: tuple, kwargs: dict) -> str | None:
    """The library function that replaces a call of canonical name ``op``, or None."""
    import torch.nn.functional as F

    if op in _FUNCTIONAL_ONLY and target is not getattr(F, op, None):
        return None
    if op == "scaled_dot_product_attention" and not _plain_attention(args, kwargs):
        return None
    if op.startswith("max_pool") and (kwargs.get("return_indices") or (len(args) > 6 and args[6])):
        return None
    for family in _FAMILIES:
        if op in family.FUNCTIONS:
            return family.FUNCTIONS[op]
    return None


def _only_first_item_used(node: Any) -> bool:
    import operator

    return all(user.op == "call_function" and user.target is operator.getitem and user.args[1] == 0
               for user in node.users)


def _plain_attention(args: tuple, kwargs: dict) -> bool:
    mask = kwargs.get("attn_mask", args[3] if len(args) > 3 else None)
    dropout = kwargs.get("dropout_p", args[4] if len(args) > 4 else 0.0)
    return mask is None and dropout == 0.0 and not kwargs.get("enable_gqa", False)


def source(used: set[str]) -> list[str]:
    """The pasted-in sources the generated file needs for the library functions in ``used``."""
    if not used:
        return []
    parts = [COMMON]
    used = set(used) | {need for family in _FAMILIES if _names(family) & used for need in getattr(family, "NEEDS", ())}
    for family in _FAMILIES:
        if _names(family) & used:
            parts.append(family.SOURCE)
    return parts


def _names(family: Any) -> set[str]:
    return set(family.FUNCTIONS.values()) | set(family.MODULES.values())


def describe(used: set[str]) -> list[str]:
    labels = {"_tk_conv": "convolution (implicit GEMM)", "_tk_conv_module": "convolution (implicit GEMM)",
              "_tk_conv_transpose": "transposed convolution (implicit GEMM, gathered)",
              "_tk_pool_module": "pooling", "_tk_bn_module": "batch norm", "_tk_batch_norm": "batch norm",
              "_tk_sdpa": "attention (online softmax)", "_tk_rnn_module": "recurrent layer (per-step gate kernel)",
              "_tk_mha_module": "multi-head attention", "_tk_encoder_layer_module": "transformer encoder layer",
              "_tk_encoder_module": "transformer encoder"}
    return sorted({labels.get(name, name[4:].replace("_", " ")) for name in used})
