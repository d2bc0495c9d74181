"""One kernel for a group of row reductions: softmax, log-softmax, logsumexp, the norms, sums and means.

The tensor is seen as (OUTER, R, INNER): a reduction row is the R elements at one (outer, inner)
position, ``INNER`` apart. A program handles ``BLOCK_C`` rows (the columns of its tile) and walks
them ``BLOCK_R`` elements at a time: one pass per reduction (fp32 accumulators), the per-row
values in registers between passes, and a last pass that writes the elementwise outputs.
"""

from __future__ import annotations

from typing import Any

from harness.llm.builtin.emit_common import Kernel, Scope, Stage, forward_expr
from harness.llm.builtin.emit_pointwise import Emitted, Tuning, call_args, describe_ops, launcher_inputs, returned
from harness.llm.builtin.ir import Pointwise, keepdim_shape, reduced_shape

_INIT = {"sum": "0.0", "max": 'float("-inf")', "min": 'float("inf")', "argmax": 'float("-inf")',
         "argmin": 'float("inf")'}


def emit_rows(index: int, group: Any, plan: Any, tuning: Tuning) -> Emitted:
    name = f"_k{index}_rows"
    kernel = Kernel(name, group, plan)
    lines: list[str] = []
    full = Stage("D", tuple(group.full_shape), "flat", "mask", "shape")
    row_scope = _row_scope(group, kernel, lines)
    for number, reduction in enumerate(group.reductions):
        _reduction_pass(kernel, number, reduction, full, lines)
        _row_values(kernel, group, row_scope)
    _write_pass(kernel, group, full, row_scope, lines)
    outputs = len(group.outputs)
    header = [
        "@triton.jit",
        f"def {name}({kernel.signature(outputs, ['R', 'INNER', 'NCOLS'])}, BLOCK_R: tl.constexpr, "
        "BLOCK_C: tl.constexpr, WIDE: tl.constexpr):",
        "    pid = tl.program_id(0)",
        "    if WIDE:  # more than 2**31 elements: 64-bit offsets",
        "        pid = pid.to(tl.int64)",
        "    cols = pid * BLOCK_C + tl.arange(0, BLOCK_C)  # the rows this program reduces",
        "    col_mask = cols < NCOLS",
        "    base = (cols // INNER) * (R * INNER) + cols % INNER",
    ]
    launcher, extra = _launcher(kernel, group, tuning, index)
    return Emitted(kernel="\n".join(header + lines) + "\n", launcher="\n".join(launcher) + "\n",
                   launcher_name=f"_launch_{index}", inputs=launcher_inputs(kernel, extra),
                   outputs=list(group.outputs), summary=f"{name}: {describe_ops(group.members)}")


def _row_scope(group: Any, kernel: Kernel, lines: list[str]) -> Scope:
    if group.axis.groups is not None:
        stage = Stage("E", (), "cols", "col_mask", "()")
        return Scope(stage=stage, level="row", lines=lines, indent="    ", memo=kernel.row_memo)
    dims = group.axis.dims
    keep = Stage("E", keepdim_shape(group.full_shape, dims), "cols", "col_mask", "row_keep")
    flat = Stage("Q", reduced_shape(group.full_shape, dims, False), "cols", "col_mask", "row_flat")
    return Scope(stage=keep, level="row", lines=lines, indent="    ", memo=kernel.row_memo, alt_stage=flat)


def _loop(lines: list[str]) -> None:
    lines += [
        "    for r0 in range(0, R, BLOCK_R):",
        "        rows = r0 + tl.arange(0, BLOCK_R)",
        "        if WIDE:",
        "            rows = rows.to(tl.int64)",
        "        mask = (rows < R)[:, None] & col_mask[None, :]",
        "        flat = base[None, :] + rows[:, None] * INNER",
    ]


def _reduction_pass(kernel: Kernel, number: int, reduction: Any, full: Stage, lines: list[str]) -> None:
    kind, acc = reduction.kind, f"acc{number}"
    lines.append(f"    # pass {number + 1}: {kind} over each row")
    lines.append(f"    {acc} = tl.full([BLOCK_R, BLOCK_C], {_INIT[kind]}, tl.float32)")
    if kind.startswith("arg"):
        lines.append(f"    idx{number} = tl.zeros([BLOCK_R, BLOCK_C], tl.int32)")
    _loop(lines)
    scope = Scope(stage=full, level="full", lines=lines, indent="        ")
    x = kernel.ref(reduction.input, scope)
    if kind == "sum":
        lines.append(f"        {acc} = {acc} + tl.where(mask, {x}, 0.0)")
    elif kind in ("max", "min"):
        lines.append(f"        {acc} = tl.{'maximum' if kind == 'max' else 'minimum'}({acc}, "
                     f"tl.where(mask, {x}, {_INIT[kind]}))")
    else:
        better = ">" if kind == "argmax" else "<"
        lines += [
            f"        candidate = tl.where(mask, {x}, {_INIT[kind]})",
            f"        take = candidate {better} {acc}  # strict: the first occurrence wins",
            f"        {acc} = tl.where(take, candidate, {acc})",
            f"        idx{number} = tl.where(take, rows[:, None].to(tl.int32), idx{number})",
        ]
    lines.append(_finalize(kind, number, reduction.count_offset))
    kernel.row_memo[reduction.uid] = (f"red{number}", False)


def _finalize(kind: str, number: int, count_offset: int | None) -> str:
    acc = f"acc{number}"
    if kind == "sum":
        divisor = "" if count_offset is None else (" / R" if count_offset == 0 else f" / (R - {count_offset})")
        return f"    red{number} = tl.sum({acc}, axis=0){divisor}"
    if kind in ("max", "min"):
        return f"    red{number} = tl.{kind}({acc}, axis=0)"
    best = "max" if kind == "argmax" else "min"
    return (f"    best{number} = tl.{best}({acc}, axis=0)\n"
            f"    red{number} = tl.min(tl.where({acc} == best{number}[None, :], idx{number}, R), axis=0)")


def _row_values(kernel: Kernel, group: Any, scope: Scope) -> None:
    """Compute the per-row values whose reductions are all done."""
    for member in group.members:
        if group.level[member.uid] != "row" or not isinstance(member, Pointwise) or member.uid in kernel.row_memo:
            continue
        inputs = [u for u in member.inputs if group.level.get(u.uid) == "row"]
        if all(u.uid in kernel.row_memo for u in inputs):
            kernel.ref(member, scope)


def _write_pass(kernel: Kernel, group: Any, full: Stage, row_scope: Scope, lines: list[str]) -> None:
    full_outputs = [(i, v) for i, v in enumerate(group.outputs) if group.level[v.uid] == "full"]
    if full_outputs:
        lines.append("    # last pass: write the elementwise results")
        _loop(lines)
        scope = Scope(stage=full, level="full", lines=lines, indent="        ")
        for position, value in full_outputs:
            kernel.store(value, f"out{position}", scope)
    for position, value in enumerate(group.outputs):
        if group.level[value.uid] == "row":
            stage = row_scope.stage
            if row_scope.alt_stage is not None and tuple(value.shape) == row_scope.alt_stage.shape:
                stage = row_scope.alt_stage
            kernel.store(value, f"out{position}", Scope(stage=stage, level="row", lines=lines, indent="    ",
                                                         memo=kernel.row_memo))


def _launcher(kernel: Kernel, group: Any, tuning: Tuning, index: int) -> tuple[list[str], list[str]]:
    groups_arg = group.axis.groups
    extra_params = ["groups"] if groups_arg is not None else []
    extra_inputs = []
    if groups_arg is not None:
        extra_inputs = [forward_expr(groups_arg)]
    lines = kernel.launcher_head(f"_launch_{index}", extra_params)
    lines.append(f"    shape = {kernel.shape_expression('D', group.full_shape)}")
    lines += _geometry(group)
    for position, value in enumerate(group.outputs):
        lines.append(f"    out{position} = torch.empty({_output_shape(group, value)}, device=in0.device, "
                     f"dtype={kernel.output_dtype(value)})")
    tile, max_cols = tuning.row_tile, tuning.row_max_cols
    lines += [
        "    NCOLS = OUTER * INNER",
        "    if NCOLS > 0 and R > 0:",
        "        if INNER == 1:  # rows are contiguous: a long tile along each row",
        f"            BLOCK_R = min(triton.next_power_of_2(R), {tile})",
        f"            BLOCK_C = max(1, min({tile} // BLOCK_R, triton.next_power_of_2(NCOLS), {max_cols}))",
        "        else:  # neighbouring rows are contiguous: a wide tile across rows keeps loads coalesced",
        f"            BLOCK_C = min(triton.next_power_of_2(INNER), {max_cols})",
        f"            BLOCK_R = max(1, min(triton.next_power_of_2(R), {tile} // BLOCK_C))",
        "        grid = (triton.cdiv(NCOLS, BLOCK_C),)",
        f"        {kernel.name}[grid]({call_args(kernel, len(group.outputs), ['R', 'INNER', 'NCOLS'])}, "
        "BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C, WIDE=OUTER * R * INNER >= 2**31, "
        "num_warps=4 if BLOCK_R * BLOCK_C <= 2048 else 8)",
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
