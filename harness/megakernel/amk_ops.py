"""AutoMegaKernel's instruction set, as data: arity, required parameters, parameter types and the
buffer kinds each operand must have.

Documents in AMK's dialect (``"ops": "amk"``, set on import) are checked against this table by
the validator (``opcheck.py``) and, with separate code, by the oracle. An op outside the table, a
wrong operand count, a missing or mistyped parameter, or an operand of the wrong kind is a
``bad_op``: AMK's loader refuses such a program, so it can never run.
"""

from __future__ import annotations

# op -> (min inputs, max inputs (-1: up to the ABI cap), outputs, required params)
OPS: dict[str, tuple[int, int, int, tuple[str, ...]]] = {
    "NOP": (0, 0, 0, ()),
    "COPY": (1, 1, 1, ()),
    "EMBED": (2, 2, 1, ("hidden",)),
    "RMSNORM": (2, 2, 1, ("eps", "hidden")),
    "LAYERNORM": (2, 3, 1, ("eps", "hidden")),
    "GEMV_TILE": (2, 3, 1, ("K", "N_tile", "n_off")),
    "GEMM_TILE": (2, 3, 1, ("M_tile", "K", "N_tile", "n_off")),
    "ATTENTION_TILE": (3, 4, 1, ("head_dim", "kv_start", "kv_len", "scale", "n_heads", "n_kv_heads")),
    "ROPE": (2, 2, 1, ("head_dim", "theta")),
    "SILU_MUL": (2, 2, 1, ()),
    "GELU": (1, 1, 1, ()),
    "ADD": (2, 2, 1, ()),
    "MUL": (1, 2, 1, ()),
    "DEQUANT": (2, 3, 1, ("qdtype", "group")),
    "SOFTMAX": (1, 1, 1, ()),
    "ALLREDUCE_SHARD": (1, 8, 1, ()),
    "KV_APPEND": (2, 2, 1, ("pos",)),
    "SAMPLE_ARGMAX": (1, 1, 1, ()),
    "ATTENTION_COMBINE": (2, 8, 1, ()),
    "FUSED": (1, -1, 1, ("recipe",)),
}

# The parameters that marshal into the device's parameter block: "i" int32, "f" a real number.
# Other keys do not reach the device (AMK warns); they are allowed.
PARAM_TYPES: dict[str, str] = {
    **{key: "i" for key in ("K", "N", "M", "N_tile", "M_tile", "n_off", "m_off", "hidden", "vocab",
                            "head_dim", "n_heads", "n_kv_heads", "kv_start", "kv_len", "pos",
                            "qdtype", "flags", "group", "dim")},
    "eps": "f", "scale": "f", "theta": "f",
}
INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1

INTEGER_DTYPES = frozenset({"I32", "I8", "U8"})
WEIGHT_KINDS = frozenset({"WEIGHT", "CONST"})

# Operand kinds, by position: (op, "in"/"out", position) -> what the operand must be. A rule
# on a position the task does not have is not checked (arity is, separately).
#   "int": an integer dtype (token ids, positions); "weight": WEIGHT or CONST; "kv": KV_CACHE.
OPERAND_RULES: dict[str, tuple[tuple[str, int, str], ...]] = {
    "EMBED": (("in", 0, "int"),),
    "RMSNORM": (("in", 1, "weight"),),
    "LAYERNORM": (("in", 1, "weight"),),
    "GEMV_TILE": (("in", 1, "weight"),),
    "GEMM_TILE": (("in", 1, "weight"),),
    "ROPE": (("in", 1, "int"),),
    "KV_APPEND": (("in", 1, "kv"), ("out", 0, "kv")),
    "ATTENTION_TILE": (("in", 1, "kv"), ("in", 2, "kv")),
}
# Only an append writes a KV cache: any other writer would clobber earlier steps' state.
KV_WRITERS = frozenset({"KV_APPEND"})

# Ops whose output is a tile described by params: columns [n_off, n_off + N_tile) of the last
# dimension and, for GEMM_TILE with m_off/M_tile, rows [m_off, m_off + M_tile) of the one before.
TILED = frozenset({"GEMV_TILE", "GEMM_TILE"})
