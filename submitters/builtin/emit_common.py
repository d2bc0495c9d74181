"""What every kernel emitter shares: its parameters, how operands are indexed, how values are computed.

Indexing: a kernel computes a *flat* index into a contiguous tensor of the stage's shape (the
group's full shape, or its per-row shape). An operand that spans the whole stage is read at
``flat``; a broadcast operand (a bias of shape (C, 1, 1) against (N, C, H, W)) is read at the
index rebuilt from the runs of dimensions it spans, ``(flat // (H*W)) % C``, with the sizes passed
as kernel arguments (Triton specializes the ones equal to 1 away). Every loaded value is cast to
fp32; results are cast to the output's dtype when stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from submitters.builtin import emit_ops
from submitters.builtin.ir import NoRule, Pointwise, Scalar, Value, is_computed


@dataclass(frozen=True)
class Tuning:
    """Launch parameters a variant may change; the same for every kernel of one reply."""

    name: str = "default"
    pointwise_block: int = 1024
    pointwise_warps: int = 4
    row_tile: int = 4096          # elements of one [BLOCK_R, BLOCK_C] tile of a row kernel
    row_max_cols: int = 64        # rows (columns of the tile) handled by one row program
    matmul_fp32: tuple = (64, 64, 32, 4, 3)      # BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages
    matmul_half: tuple = (128, 128, 64, 8, 3)
    group_m: int = 8


@dataclass
class Emitted:
    kernel: str                       # the @triton.jit source
    launcher: str                     # the Python function that allocates outputs and launches
    launcher_name: str
    inputs: list = field(default_factory=list)   # forward expressions passed to the launcher, in order
    outputs: list = field(default_factory=list)  # values the launcher returns, in order
    summary: str = ""
    support: list = field(default_factory=list)  # names of launch helpers the launcher calls


# Launch helpers a generated file includes when its launchers call them. Work is split only when the
# natural grid cannot keep the GPU busy: a 256 x 256 matmul output with K = 524288 is 16 tiles, a
# mean over a whole tensor is one row.
LAUNCH_HELPERS = {
    "_sm_count": """@functools.lru_cache(maxsize=None)
def _sm_count(index):
    return torch.cuda.get_device_properties(index).multi_processor_count
""",
    "_splits": """def _splits(device, programs, length, block, cap):
    # pieces to cut each program's loop of `length` into when the programs alone cannot fill the GPU
    if device.type != "cuda" or length < 8 * block:
        return 1
    sms = _sm_count(device.index if device.index is not None else torch.cuda.current_device())
    if programs >= sms:
        return 1
    return max(1, min(4 * sms // programs, triton.cdiv(length, 2 * block), cap))
""",
}


def launch_helpers(names: set[str]) -> list[str]:
    """The helper sources for ``names`` (and what they call), in a stable order."""
    if names:
        names = set(names) | {"_sm_count"}
    return [source for name, source in LAUNCH_HELPERS.items() if name in names]


@dataclass
class Stage:
    """An index space: ``key`` prefixes its dimension arguments (D0, D1, ...)."""

    key: str
    shape: tuple
    flat: str
    mask: str
    shape_expr: str   # the launcher's expression for this stage's runtime shape

    def dim(self, index: int) -> str:
        return f"{self.key}{index}"


@dataclass
class Scope:
    """Where values are being computed: a stage, a level (full or row) and what is already known."""

    stage: Stage
    level: str
    lines: list[str]
    indent: str
    memo: dict = field(default_factory=dict)   # uid -> (expression, is_bool)
    alt_stage: Stage | None = None             # per-row values: the shape without the reduced dims


class Kernel:
    def __init__(self, name: str, group: Any, plan: Any):
        self.name, self.group, self.plan = name, group, plan
        self.tensors: list[Value] = []       # external tensor operands: in0, in1, ...
        self.scalars: list[Scalar] = []      # run-time scalars: s0, s1, ...
        self.stages_used: dict[str, Stage] = {}
        self.flat_indexed: set[int] = set()  # tensor params read at a flat index: made contiguous
        self.loaded_at: dict[str, list[int]] = {}  # stage key -> tensor params loaded there
        self.row_memo: dict = {}             # per-row values computed between passes

    # -- parameters ------------------------------------------------------------------------------

    def tensor_param(self, value: Value) -> str:
        for index, known in enumerate(self.tensors):
            if known.uid == value.uid:
                return f"in{index}"
        self.tensors.append(value)
        return f"in{len(self.tensors) - 1}"

    def scalar_text(self, scalar: Scalar | None) -> str:
        if scalar.is_literal:
            return emit_ops.literal(scalar.literal) if not isinstance(scalar.literal, str) else repr(scalar.literal)
        for index, known in enumerate(self.scalars):
            if known.expr == scalar.expr:
                return f"s{index}"
        self.scalars.append(scalar)
        return f"s{len(self.scalars) - 1}"

    def use_stage(self, stage: Stage) -> Stage:
        self.stages_used.setdefault(stage.key, stage)
        return stage

    def stage_params(self) -> list[str]:
        return [stage.dim(d) for stage in self.stages_used.values() for d in range(len(stage.shape))]

    def stage_args(self) -> list[str]:
        return [f"*{stage.shape_expr}" for stage in self.stages_used.values() if stage.shape]

    # -- values ------------------------------------------------------------------------------------

    def ref(self, value: Value, scope: Scope, want_bool: bool = False) -> str:
        text, is_bool = self._ref(value, scope)
        if want_bool and not is_bool:
            return f"({text} != 0)"
        if not want_bool and is_bool:
            return f"{text}.to(tl.float32)"
        return text

    def _ref(self, value: Value, scope: Scope) -> tuple[str, bool]:
        if isinstance(value, Scalar):
            return self.scalar_text(value), isinstance(value.literal, bool)
        if value.uid in scope.memo:
            return scope.memo[value.uid]
        level = self.group.level.get(value.uid) if is_computed(value) else None
        if level == "row" and scope.level == "full":
            text, is_bool = self.row_memo[value.uid]
            return f"{text}[None, :]", is_bool
        if level in ("full", "row") and isinstance(value, Pointwise):
            result = self._compute(value, scope)
        elif level == "core":
            result = ("acc", False)
        elif level == "row":
            result = self.row_memo[value.uid]
        else:
            result = self._load(value, scope)
        scope.memo[value.uid] = result
        return result

    def _compute(self, value: Pointwise, scope: Scope) -> tuple[str, bool]:
        wants = emit_ops.wants_bool(value.op)
        args = [self.ref(u, scope, want_bool=wants and (i == 0 or value.op != "where")) for i, u in
                enumerate(value.inputs)]
        attrs = {k: self.scalar_text(v) for k, v in value.attrs.items() if v is not None}
        raw = {k: (v.literal if v.is_literal else None) for k, v in value.attrs.items() if v is not None}
        expression = emit_ops.expression(value.op, args, attrs, raw, lambda d: self._coordinate(scope, d))
        name = f"v{value.uid}"
        scope.lines.append(f"{scope.indent}{name} = {expression}")
        return name, emit_ops.result_is_bool(value.op)

    def _coordinate(self, scope: Scope, dim: int) -> str:
        """Each element's index along ``dim`` of the stage (negative dims count from the end)."""
        stage, rank = self.use_stage(scope.stage), len(scope.stage.shape)
        if not -rank <= dim < rank:
            raise NoRule(f"an index along dim {dim} of a {rank}-dim value")
        dim %= rank
        inner = _product(stage.dim(d) for d in range(dim + 1, rank))
        text = stage.flat if inner is None else f"({stage.flat} // ({inner}))"
        return text if dim == 0 else f"({text} % {stage.dim(dim)})"

    def _load(self, value: Value, scope: Scope) -> tuple[str, bool]:
        if not isinstance(value, Value) or value.shape is None:
            raise NoRule("an operand without a shape")
        pointer = self.tensor_param(value)
        self.flat_indexed.add(int(pointer[2:]))
        self.loaded_at.setdefault(scope.stage.key, []).append(int(pointer[2:]))
        stage = scope.stage
        if scope.alt_stage is not None and not _broadcastable(value.shape, stage.shape):
            stage = scope.alt_stage
        index = self.index_expression(value.shape, stage)
        is_bool = value.dtype is not None and str(value.dtype) == "torch.bool"
        cast = "" if is_bool else ".to(tl.float32)"
        name = f"x{value.uid}"
        if index is None:  # one element broadcast everywhere
            scope.lines.append(f"{scope.indent}{name} = tl.load({pointer}){cast}")
        else:
            scope.lines.append(f"{scope.indent}{name} = tl.load({pointer} + {index}, mask={stage.mask}, "
                               f"other=0){cast}")
        return name, is_bool

    def index_expression(self, operand_shape: tuple, stage: Stage) -> str | None:
        """The element of a contiguous ``operand_shape`` tensor that broadcasts to ``stage.flat``."""
        rank = len(stage.shape)
        padded = (1,) * (rank - len(operand_shape)) + tuple(operand_shape)
        if len(padded) != rank:
            raise NoRule(f"an operand of shape {tuple(operand_shape)} against {stage.shape}")
        spans = [p == s for p, s in zip(padded, stage.shape)]
        if all(spans):
            return stage.flat
        if not any(spans) or all(p == 1 for p in padded):
            return None
        self.use_stage(stage)
        return " + ".join(self._run_terms(spans, stage))

    def _run_terms(self, spans: list[bool], stage: Stage) -> list[str]:
        runs, start = [], 0
        for d in range(1, len(spans) + 1):
            if d == len(spans) or spans[d] != spans[start]:
                runs.append((start, d, spans[start]))
                start = d
        terms = []
        for start, stop, spanned in runs:
            if not spanned:
                continue
            inner = _product(stage.dim(d) for d in range(stop, len(spans)))
            size = _product(stage.dim(d) for d in range(start, stop))
            stride = _product(stage.dim(d) for a, b, s in runs if s and a >= stop for d in range(a, b))
            term = stage.flat if inner is None else f"({stage.flat} // ({inner}))"
            if start > 0:
                term = f"({term} % ({size}))"
            terms.append(term if stride is None else f"{term} * ({stride})")
        return terms

    def store(self, value: Value, pointer: str, scope: Scope) -> None:
        text, is_bool = self._ref(value, scope)
        cast = "" if is_bool else f".to({pointer}.dtype.element_ty)"
        scope.lines.append(f"{scope.indent}tl.store({pointer} + {scope.stage.flat}, {text}{cast}, "
                           f"mask={scope.stage.mask})")

    # -- launcher helpers ----------------------------------------------------------------------------

    def launcher_head(self, name: str, extra: list[str]) -> list[str]:
        params = [f"in{i}" for i in range(len(self.tensors))] + [f"s{i}" for i in range(len(self.scalars))] + extra
        lines = [f"def {name}({', '.join(params)}):"]
        lines += [f"    in{i} = in{i}.contiguous()" for i in sorted(self.flat_indexed)]
        return lines

    def shape_expression(self, stage_key: str, shape: tuple) -> str:
        """The launcher's expression for the runtime shape of the tensors loaded at ``stage_key``."""
        loaded = list(dict.fromkeys(self.loaded_at.get(stage_key, [])))
        for index in loaded:
            if tuple(self.tensors[index].shape) == tuple(shape):
                return f"tuple(in{index}.shape)"
        if not loaded:
            raise NoRule("a kernel whose shape no input determines")
        return "tuple(torch.broadcast_shapes(" + ", ".join(f"in{i}.shape" for i in loaded) + "))"

    def output_dtype(self, value: Value) -> str:
        """The launcher's expression for ``value``'s dtype: float results follow the inputs' precision."""
        dtype = str(value.dtype) if value.dtype is not None else "torch.float32"
        if value.dtype is not None and not value.dtype.is_floating_point:
            return dtype
        for index, operand in enumerate(self.tensors):
            if operand.is_float:
                return f"in{index}.dtype"
        return "torch.float32"

    def signature(self, outputs: int, extra: list[str]) -> str:
        params = [f"in{i}" for i in range(len(self.tensors))] + [f"out{i}" for i in range(outputs)]
        params += [f"s{i}" for i in range(len(self.scalars))] + extra + self.stage_params()
        return ", ".join(params)


def forward_expr(value: Value) -> str:
    """How ``forward`` names a value a launcher receives."""
    if isinstance(value, Scalar):
        return value.expr if value.expr else emit_ops.literal(value.literal)
    return getattr(value, "expr", "") or value.name


def _broadcastable(shape: tuple, target: tuple) -> bool:
    if len(shape) > len(target):
        return False
    padded = (1,) * (len(target) - len(shape)) + tuple(shape)
    return all(p == t or p == 1 for p, t in zip(padded, target))


def _product(names: Any) -> str | None:
    names = list(names)
    return " * ".join(names) if names else None
