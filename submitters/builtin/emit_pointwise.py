"""One elementwise kernel for a chain of pointwise values: one program per BLOCK elements."""

from __future__ import annotations

from typing import Any

from submitters.builtin.emit_common import Emitted, Kernel, Scope, Stage, Tuning, forward_expr


def emit_pointwise(index: int, group: Any, plan: Any, tuning: Tuning) -> Emitted:
    name = f"_k{index}_pointwise"
    kernel = Kernel(name, group, plan)
    stage = Stage("D", tuple(group.full_shape), "flat", "mask", "shape")
    scope = Scope(stage=stage, level="full", lines=[], indent="    ")
    for position, value in enumerate(group.outputs):
        kernel.store(value, f"out{position}", scope)
    outputs = len(group.outputs)
    params = kernel.signature(outputs, ["numel"])
    body = [
        "@triton.jit",
        f"def {name}({params}, BLOCK: tl.constexpr, WIDE: tl.constexpr):",
        "    pid = tl.program_id(0)",
        "    if WIDE:  # more than 2**31 elements: 64-bit offsets",
        "        pid = pid.to(tl.int64)",
        "    flat = pid * BLOCK + tl.arange(0, BLOCK)",
        "    mask = flat < numel",
        *scope.lines,
    ]
    shape_expr = kernel.shape_expression("D", group.full_shape)
    launcher_name = f"_launch_{index}"
    launcher = kernel.launcher_head(launcher_name, [])
    launcher.append(f"    shape = {shape_expr}")
    launcher += [f"    out{i} = torch.empty(shape, device=in0.device, dtype={kernel.output_dtype(v)})"
                 for i, v in enumerate(group.outputs)]
    launcher += [
        "    numel = math.prod(shape)",
        "    if numel > 0:",
        f"        block = 65536 if in0.device.type == 'cpu' else {tuning.pointwise_block}  # the interpreter pays per program",
        "        grid = (triton.cdiv(numel, block),)",
        f"        {name}[grid]({call_args(kernel, outputs, ['numel'])}, BLOCK=block, "
        f"WIDE=numel >= 2**31, num_warps={tuning.pointwise_warps})",
        f"    return {returned(outputs)}",
    ]
    return Emitted(kernel="\n".join(body) + "\n", launcher="\n".join(launcher) + "\n", launcher_name=launcher_name,
                   inputs=launcher_inputs(kernel), outputs=list(group.outputs),
                   summary=f"{name}: elementwise {describe_ops(group.members)}")


def launcher_inputs(kernel: Kernel, extra: list | None = None) -> list[str]:
    return [forward_expr(v) for v in kernel.tensors] + [forward_expr(s) for s in kernel.scalars] + (extra or [])


def call_args(kernel: Kernel, outputs: int, extra: list[str]) -> str:
    """The launch's arguments, in the order of ``Kernel.signature``."""
    args = [f"in{i}" for i in range(len(kernel.tensors))] + [f"out{i}" for i in range(outputs)]
    args += [f"s{i}" for i in range(len(kernel.scalars))] + extra + kernel.stage_args()
    return ", ".join(args)


def returned(outputs: int) -> str:
    names = [f"out{i}" for i in range(outputs)]
    return names[0] if outputs == 1 else "(" + ", ".join(names) + ")"


def describe_ops(members: list) -> str:
    names = []
    for member in members:
        label = getattr(member, "op", "") or getattr(member, "kind", "") or type(member).__name__.lower()
        if label not in ("identity",):
            names.append(label)
    return " -> ".join(names) if names else "copy"
