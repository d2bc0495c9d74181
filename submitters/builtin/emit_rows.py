"""Kernels for a group of row reductions: softmax, log-softmax, logsumexp, the norms, sums and means.

The tensor is seen as (OUTER, R, INNER): a reduction row is the R elements at one (outer, inner)
position, ``INNER`` apart. A program handles ``BLOCK_C`` rows (the columns of its tile) and walks
them ``BLOCK_R`` elements at a time: one pass per reduction (fp32 accumulators), the per-row
values in registers between passes, and a last pass that writes the elementwise outputs.

When there are too few rows to fill a GPU (a mean over a whole tensor is one row), a second form
splits every row into segments: launch ``PHASE`` p sums reduction p over each segment into a
small fp32 buffer, later phases add those partials up first (in a fixed order), and the last
phase writes the outputs, segment by segment. The launcher picks the form at run time.
"""

from __future__ import annotations

from typing import Any

from submitters.builtin.emit_common import Kernel, Scope, Stage, forward_expr
from submitters.builtin.emit_common import Emitted, Tuning
from submitters.builtin.emit_pointwise import call_args, describe_ops, launcher_inputs, returned
from submitters.builtin.ir import Pointwise, keepdim_shape, reduced_shape

_INIT = {"sum": "0.0", "max": 'float("-inf")', "min": 'float("inf")', "argmax": 'float("-inf")',
         "argmin": 'float("inf")'}
_SPLITTABLE = {"sum", "max", "min"}
_GEOMETRY = ["R", "INNER", "NCOLS"]


def emit_rows(index: int, group: Any, plan: Any, tuning: Tuning) -> Emitted:
    name = f"_k{index}_rows"
    kernel = Kernel(name, group, plan)
    whole = _RowWriter(kernel, group).whole_rows()
    split = _RowWriter(kernel, group).split_rows() if _splittable(group) else None
    outputs = len(group.outputs)
    params = kernel.signature(outputs, _GEOMETRY)  # after both bodies: they may add parameters
    sources = [_header(name, params, "") + whole]
    if split is not None:
        sources.append(_header(f"{name}_split", f"ws, SEG, SPLITS, {params}",
                               ", BLOCK_S: tl.constexpr, PHASE: tl.constexpr") + split)
    launcher, extra = _launcher(kernel, group, tuning, index, split is not None)
    return Emitted(kernel="\n\n".join("\n".join(lines) + "\n" for lines in sources),
                   launcher="\n".join(launcher) + "\n", launcher_name=f"_launch_{index}",
                   inputs=launcher_inputs(kernel, extra), outputs=list(group.outputs),
                   summary=f"{name}: {describe_ops(group.members)}", support=["_splits"] if split else [])


def _splittable(group: Any) -> bool:
    return all(r.kind in _SPLITTABLE for r in group.reductions)


def _header(name: str, params: str, extra: str) -> list[str]:
    return [
        "@triton.jit",
        f"def {name}({params}, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr{extra}, WIDE: tl.constexpr):",
        "    pid = tl.program_id(0)",
        "    if WIDE:  # more than 2**31 elements: 64-bit offsets",
        "        pid = pid.to(tl.int64)",
        "    cols = pid * BLOCK_C + tl.arange(0, BLOCK_C)  # the rows this program reduces",
        "    col_mask = cols < NCOLS",
        "    base = (cols // INNER) * (R * INNER) + cols % INNER",
    ]


class _RowWriter:
    """Writes one kernel body; the two forms share the passes and differ in loop bounds and phases."""

    def __init__(self, kernel: Kernel, group: Any):
        self.kernel, self.group = kernel, group
        self.lines: list[str] = []
        kernel.row_memo.clear()
        self.full = Stage("D", tuple(group.full_shape), "flat", "mask", "shape")

    # -- the two forms -----------------------------------------------------------------------------

    def whole_rows(self) -> list[str]:
        for number, reduction in enumerate(self.group.reductions):
            self._pass(number, reduction, "    ", "0", "R")
            self.lines.append("    " + self._finalize(reduction, number, f"acc{number}", "axis=0"))
            self.kernel.row_memo[reduction.uid] = (f"red{number}", False)
            self._row_values("    ")
        self._write(self.lines, "    ", "0", "R", "col_mask")
        return self.lines

    def split_rows(self) -> list[str]:
        count = len(self.group.reductions)
        self.lines += [
            "    split = tl.program_id(1)  # the segment [r_begin, r_end) of each row",
            "    r_begin = split * SEG",
            "    r_end = tl.minimum(R, r_begin + SEG)",
            "    parts = tl.arange(0, BLOCK_S)",
            "    first_segment = col_mask & ((split + tl.zeros([BLOCK_C], tl.int32)) == 0)  # stores per-row results",
        ]
        for number, reduction in enumerate(self.group.reductions):
            self.lines.append(f"    if PHASE == {number}:")
            self._pass(number, reduction, "        ", "r_begin", "r_end")
            partial = f"tl.{'sum' if reduction.kind == 'sum' else reduction.kind}(acc{number}, axis=0)"
            self.lines.append(f"        tl.store(ws + ({number} * SPLITS + split) * NCOLS + cols, {partial}, "
                              "mask=col_mask)")
            self.lines += [
                f"    if PHASE > {number}:  # add up the segments' partials of reduction {number + 1}",
                f"        partial{number} = tl.load(ws + ({number} * SPLITS + parts[:, None]) * NCOLS + cols[None, :], "
                f"mask=(parts < SPLITS)[:, None] & col_mask[None, :], other={_INIT[reduction.kind]})",
                "        " + self._finalize(reduction, number, f"partial{number}", "axis=0"),
            ]
            self.kernel.row_memo[reduction.uid] = (f"red{number}", False)
            self._row_values("        ")
        self.lines.append(f"    if PHASE == {count}:")
        self._write(self.lines, "        ", "r_begin", "r_end", "first_segment")
        return self.lines

    # -- pieces ------------------------------------------------------------------------------------

    def _loop(self, indent: str, begin: str, end: str) -> str:
        inner = indent + "    "
        self.lines += [
            f"{indent}for r0 in range({begin}, {end}, BLOCK_R):",
            f"{inner}rows = r0 + tl.arange(0, BLOCK_R)",
            f"{inner}if WIDE:",
            f"{inner}    rows = rows.to(tl.int64)",
            f"{inner}mask = (rows < {end})[:, None] & col_mask[None, :]",
            f"{inner}flat = base[None, :] + rows[:, None] * INNER",
        ]
        return inner

    def _pass(self, number: int, reduction: Any, indent: str, begin: str, end: str) -> None:
        kind, acc = reduction.kind, f"acc{number}"
        self.lines.append(f"{indent}# pass {number + 1}: {kind} over each row")
        self.lines.append(f"{indent}{acc} = tl.full([BLOCK_R, BLOCK_C], {_INIT[kind]}, tl.float32)")
        if kind.startswith("arg"):
            self.lines.append(f"{indent}idx{number} = tl.zeros([BLOCK_R, BLOCK_C], tl.int32)")
        inner = self._loop(indent, begin, end)
        x = self.kernel.ref(reduction.input, Scope(stage=self.full, level="full", lines=self.lines, indent=inner))
        if kind == "sum":
            self.lines.append(f"{inner}{acc} = {acc} + tl.where(mask, {x}, 0.0)")
        elif kind in ("max", "min"):
            self.lines.append(f"{inner}{acc} = tl.{'maximum' if kind == 'max' else 'minimum'}({acc}, "
                              f"tl.where(mask, {x}, {_INIT[kind]}))")
        else:
            better = ">" if kind == "argmax" else "<"
            self.lines += [
                f"{inner}candidate = tl.where(mask, {x}, {_INIT[kind]})",
                f"{inner}take = candidate {better} {acc}  # strict: the first occurrence wins",
                f"{inner}{acc} = tl.where(take, candidate, {acc})",
                f"{inner}idx{number} = tl.where(take, rows[:, None].to(tl.int32), idx{number})",
            ]

    @staticmethod
    def _finalize(reduction: Any, number: int, acc: str, axis: str) -> str:
        kind, offset = reduction.kind, reduction.count_offset
        if kind == "sum":
            divisor = "" if offset is None else (" / R" if offset == 0 else f" / (R - {offset})")
            return f"red{number} = tl.sum({acc}, {axis}){divisor}"
        if kind in ("max", "min"):
            return f"red{number} = tl.{kind}({acc}, {axis})"
        best = "max" if kind == "argmax" else "min"  # the smallest index among the lanes holding the best value
        return (f"red{number} = tl.min(tl.where({acc} == tl.{best}({acc}, {axis})[None, :], idx{number}, R), "
                f"{axis})")

    def _row_scope(self, indent: str, mask: str = "col_mask") -> Scope:
        if self.group.axis.groups is not None:
            return Scope(stage=Stage("E", (), "cols", mask, "()"), level="row", lines=self.lines, indent=indent,
                         memo=self.kernel.row_memo)
        dims = self.group.axis.dims
        keep = Stage("E", keepdim_shape(self.group.full_shape, dims), "cols", mask, "row_keep")
        flat = Stage("Q", reduced_shape(self.group.full_shape, dims, False), "cols", mask, "row_flat")
        return Scope(stage=keep, level="row", lines=self.lines, indent=indent, memo=self.kernel.row_memo,
                     alt_stage=flat)

    def _row_values(self, indent: str) -> None:
        """Compute the per-row values whose reductions are all done."""
        scope = self._row_scope(indent)
        for member in self.group.members:
            if self.group.level[member.uid] != "row" or not isinstance(member, Pointwise) \
                    or member.uid in self.kernel.row_memo:
                continue
            inputs = [u for u in member.inputs if self.group.level.get(u.uid) == "row"]
            if all(u.uid in self.kernel.row_memo for u in inputs):
                self.kernel.ref(member, scope)

    def _write(self, lines: list[str], indent: str, begin: str, end: str, row_mask: str) -> None:
        group = self.group
        full_outputs = [(i, v) for i, v in enumerate(group.outputs) if group.level[v.uid] == "full"]
        if full_outputs:
            lines.append(f"{indent}# last pass: write the elementwise results")
            inner = self._loop(indent, begin, end)
            scope = Scope(stage=self.full, level="full", lines=lines, indent=inner)
            for position, value in full_outputs:
                self.kernel.store(value, f"out{position}", scope)
        for position, value in enumerate(group.outputs):
            if group.level[value.uid] == "row":
                scope = self._row_scope(indent, row_mask)
                if scope.alt_stage is not None and tuple(value.shape) == scope.alt_stage.shape:
                    scope.stage = scope.alt_stage
                self.kernel.store(value, f"out{position}", scope)
        if lines[-1].rstrip().endswith(":"):
            lines.append(f"{indent}pass")


def _launcher(kernel: Kernel, group: Any, tuning: Tuning, index: int, splittable: bool) -> tuple[list[str], list]:
    groups_arg = group.axis.groups
    extra_inputs = [forward_expr(groups_arg)] if groups_arg is not None else []
    lines = kernel.launcher_head(f"_launch_{index}", ["groups"] if groups_arg is not None else [])
    lines.append(f"    shape = {kernel.shape_expression('D', group.full_shape)}")
    lines += _geometry(group)
    for position, value in enumerate(group.outputs):
        lines.append(f"    out{position} = torch.empty({_output_shape(group, value)}, device=in0.device, "
                     f"dtype={kernel.output_dtype(value)})")
    tile, max_cols = tuning.row_tile, tuning.row_max_cols
    args = call_args(kernel, len(group.outputs), _GEOMETRY)
    launch = ("BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, WIDE=OUTER * R * INNER >= 2**31, "
              "num_warps=4 if BLOCK_R * BLOCK_C <= 2048 else 8")
    lines += [
        "    NCOLS = OUTER * INNER",
        "    if NCOLS == 0 or R == 0:",
        f"        return {returned(len(group.outputs))}",
        "    if INNER == 1:  # rows are contiguous: a long tile along each row",
        f"        BLOCK_R = min(triton.next_power_of_2(R), {tile})",
        f"        BLOCK_C = max(1, min({tile} // BLOCK_R, triton.next_power_of_2(NCOLS), {max_cols}))",
        "    else:  # neighbouring rows are contiguous: a wide tile across rows keeps loads coalesced",
        f"        BLOCK_C = min(triton.next_power_of_2(INNER), {max_cols})",
        f"        BLOCK_R = max(1, min(triton.next_power_of_2(R), {tile} // BLOCK_C))",
        "    programs = triton.cdiv(NCOLS, BLOCK_C)",
    ]
    if splittable:
        count = len(group.reductions)
        lines += [
            "    splits = _splits(in0.device, programs, R, BLOCK_R, 128)",
            "    if splits > 1:  # too few rows for the GPU: split each row into segments",
            "        seg = triton.cdiv(triton.cdiv(R, splits), BLOCK_R) * BLOCK_R",
            "        splits = triton.cdiv(R, seg)",
            f"        ws = torch.empty(({count}, splits, NCOLS), device=in0.device, dtype=torch.float32)",
            f"        for phase in range({count + 1}):",
            f"            {kernel.name}_split[(programs, splits)](ws, seg, splits, {args}, BLOCK_S="
            f"triton.next_power_of_2(splits), PHASE=phase, {launch})",
            f"        return {returned(len(group.outputs))}",
        ]
    lines += [
        f"    {kernel.name}[(programs,)]({args}, {launch})",
        f"    return {returned(len(group.outputs))}",
    ]
    return lines, extra_inputs


def _geometry(group: Any) -> list[str]:
    """OUTER, R, INNER (and the per-row shapes) from the runtime shape."""
    if group.axis.groups is not None:
        return ["    OUTER = shape[0] * int(groups)", "    INNER = 1", "    R = math.prod(shape) // OUTER"]
    first, last = group.axis.dims[0], group.axis.dims[-1]
    count = last - first + 1
    return [
        f"    OUTER = math.prod(shape[:{first}])",
        f"    R = math.prod(shape[{first}:{last + 1}])",
        f"    INNER = math.prod(shape[{last + 1}:])",
        f"    row_keep = shape[:{first}] + (1,) * {count} + shape[{last + 1}:]",
        f"    row_flat = shape[:{first}] + shape[{last + 1}:]",
    ]


def _output_shape(group: Any, value: Any) -> str:
    if group.level[value.uid] == "full":
        return "shape"
    keep = keepdim_shape(group.full_shape, group.axis.dims)
    return "row_keep" if tuple(value.shape) == keep else "row_flat"


def emit_scan(index: int, group: Any, plan: Any, tuning: Tuning) -> Emitted:
    """A prefix scan along each row: chunk by chunk, each chunk scanned in parallel plus the carry."""
    name = f"_k{index}_scan"
    kernel = Kernel(name, group, plan)
    scan, lines = group.scan, []
    # fp64 chunk scans and carry: an fp32 carry over a long row drifts past 1e-4 where the prefix
    # crosses zero (PyTorch's CPU cumsum accumulates in double); the scan is memory-bound either way
    neutral, combine = ("0.0", "tl.cumsum(x.to(tl.float64), axis=0) + carry[None, :]") if scan.kind == "cumsum" \
        else ("1.0", "tl.cumprod(x.to(tl.float64), axis=0) * carry[None, :]")
    writer = _RowWriter(kernel, group)
    writer.lines = lines
    lines += [
        f"    carry = tl.full([BLOCK_C], {neutral}, tl.float64)  # the running {scan.kind} of the chunks so far",
        "    last_row = tl.arange(0, BLOCK_R) == BLOCK_R - 1",
    ]
    inner = writer._loop("    ", "0", "R")
    scope = Scope(stage=writer.full, level="full", lines=lines, indent=inner)
    x = kernel.ref(scan.input, scope)
    lines += [
        f"{inner}x = tl.where(mask, {x}, {neutral})",
        f"{inner}wide_scan = {combine}",
        f"{inner}carry = tl.sum(tl.where(last_row[:, None], wide_scan, 0.0), axis=0)",
        f"{inner}scanned = wide_scan.to(tl.float32)",
    ]
    scope.memo[scan.uid] = ("scanned", False)
    for position, value in enumerate(group.outputs):
        kernel.store(value, f"out{position}", scope)
    params = kernel.signature(len(group.outputs), _GEOMETRY)
    launcher, extra = _launcher(kernel, group, tuning, index, False)
    return Emitted(kernel="\n".join(_header(name, params, "") + lines) + "\n", launcher="\n".join(launcher) + "\n",
                   launcher_name=f"_launch_{index}", inputs=launcher_inputs(kernel, extra),
                   outputs=list(group.outputs), summary=f"{name}: {describe_ops(group.members)}")
