"""A tiled matmul (fp32 accumulation, grouped program order) with its elementwise epilogue fused.

``linear`` products read the (N, K) weight transposed through its strides, so no copy is made;
transposed or sliced operands likewise pass their strides. The epilogue computes on the fp32
accumulator tile before the single store: bias, activation chains, residual adds.
"""

from __future__ import annotations

from typing import Any

from submitters.builtin.emit_common import Kernel, Scope, Stage
from submitters.builtin.emit_common import Emitted, Tuning
from submitters.builtin.emit_pointwise import call_args, describe_ops, launcher_inputs, returned

# From this depth on, fp32 sums over K drift past a 1e-4 tolerance unless compensated.
COMPENSATE_FROM_K = 4096
_STRIDES = ["M", "N", "K", "stride_ab", "stride_am", "stride_ak", "stride_bb", "stride_bk", "stride_bn"]

_PROLOGUE = [
    "    pid = tl.program_id(0)",
    "    batch = tl.program_id(1)",
    "    split = tl.program_id(2)  # split-K: this program sums K in [k_begin, k_end)",
    "    # grouped order: GROUP_M row blocks share the column blocks they read, which stay in L2",
    "    num_m = tl.cdiv(M, BLOCK_M)",
    "    num_n = tl.cdiv(N, BLOCK_N)",
    "    in_group = GROUP_M * num_n",
    "    first_m = (pid // in_group) * GROUP_M",
    "    group_rows = tl.minimum(num_m - first_m, GROUP_M)",
    "    pid_m = first_m + (pid % in_group) % group_rows",
    "    pid_n = (pid % in_group) // group_rows",
    "    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)",
    "    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)",
    "    if WIDE:  # operands or output beyond 2**31 elements: 64-bit offsets",
    "        offs_m = offs_m.to(tl.int64)",
    "        offs_n = offs_n.to(tl.int64)",
    "        batch = batch.to(tl.int64)",
    "    a_rows = {a} + batch * stride_ab + offs_m[:, None] * stride_am",
    "    b_cols = {b} + batch * stride_bb + offs_n[None, :] * stride_bn",
    "    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)",
    "    carry = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)",
    "    k_begin = split * K_SPLIT",
    "    k_end = tl.minimum(K, k_begin + K_SPLIT)",
    "    for k0 in range(k_begin, k_end, BLOCK_K):",
    "        offs_k = k0 + tl.arange(0, BLOCK_K)",
    "        a_tile = tl.load(a_rows + offs_k[None, :] * stride_ak, mask=(offs_m[:, None] < M) & (offs_k[None, :] < k_end), "
    "other=0.0)",
    "        b_tile = tl.load(b_cols + offs_k[:, None] * stride_bk, mask=(offs_k[:, None] < k_end) & (offs_n[None, :] < N), "
    "other=0.0)",
    "        if UPCAST:  # bf16 on the CPU: Triton's interpreter multiplies bf16 tiles wrongly, fp32 does not",
    "            a_tile = a_tile.to(tl.float32)",
    "            b_tile = b_tile.to(tl.float32)",
    "        if COMPENSATE:  # long fp32 sums: Kahan-compensated accumulation of the per-block products",
    "            partial = tl.dot(a_tile, b_tile, input_precision=PRECISION) - carry",
    "            total = acc + partial",
    "            carry = (total - acc) - partial",
    "            acc = total",
    "        else:",
    "            acc = tl.dot(a_tile, b_tile, acc, input_precision=PRECISION)",
    "    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)",
    "    flat = (batch * M + offs_m[:, None]) * N + offs_n[None, :]",
    "    if PARTIAL:  # split-K: store this slice's sum; the reduce kernel adds the slices and runs the epilogue",
    "        tl.store(ws + split * (tl.num_programs(1) * M * N) + flat, acc, mask=mask)",
    "    else:",
]

_REDUCE_PROLOGUE = [
    "    pid = tl.program_id(0)",
    "    if WIDE:",
    "        pid = pid.to(tl.int64)",
    "    flat = pid * BLOCK + tl.arange(0, BLOCK)",
    "    mask = flat < numel",
    "    acc = tl.zeros([BLOCK], dtype=tl.float32)",
    "    for part in range(0, SPLITS):  # the split-K slices, added in a fixed order (deterministic)",
    "        acc += tl.load(ws + part * numel + flat, mask=mask, other=0.0)",
]


_GEOMETRY = {
    "linear": [
        "    a = {a} if {a}.dim() == 2 else {a}.reshape(-1, {a}.shape[-1])",
        "    b = {b}",
        "    batch, (M, K), N = 1, a.shape, b.shape[0]",
        "    strides = (0, a.stride(0), a.stride(1), 0, b.stride(1), b.stride(0))  # the weight read transposed",
        "    out_shape = tuple({a}.shape[:-1]) + (N,)",
    ],
    "matmul": [
        "    a = {a} if {a}.dim() == 2 else {a}.reshape(-1, {a}.shape[-1])",
        "    b = {b}",
        "    batch, (M, K), N = 1, a.shape, b.shape[1]",
        "    strides = (0, a.stride(0), a.stride(1), 0, b.stride(0), b.stride(1))",
        "    out_shape = tuple({a}.shape[:-1]) + (N,)",
    ],
    "batched": [
        "    a = {a}.reshape(-1, {a}.shape[-2], {a}.shape[-1])",
        "    b = {b}.reshape(-1, {b}.shape[-2], {b}.shape[-1])",
        "    (batch, M, K), N = a.shape, b.shape[2]",
        "    strides = (a.stride(0), a.stride(1), a.stride(2), b.stride(0), b.stride(1), b.stride(2))",
        "    out_shape = tuple({a}.shape[:-1]) + (N,)",
    ],
}


def emit_matmul(index: int, group: Any, plan: Any, tuning: Tuning) -> Emitted:
    name = f"_k{index}_matmul"
    kernel = Kernel(name, group, plan)
    core = group.members[0]
    a_param, b_param = kernel.tensor_param(core.a), kernel.tensor_param(core.b)
    stage = Stage("D", tuple(group.full_shape), "flat", "mask", "out_shape")
    tiled, flat = [], []  # the epilogue twice: on the 2-D tile, and on the split-K reduce kernel's 1-D block
    for lines, indent in ((tiled, "        "), (flat, "    ")):
        scope = Scope(stage=stage, level="full", lines=lines, indent=indent)
        for position, value in enumerate(group.outputs):
            kernel.store(value, f"out{position}", scope)
    params = kernel.signature(len(group.outputs), _STRIDES)
    main = [
        "@triton.jit",
        f"def {name}(ws, K_SPLIT, {params}, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, "
        "BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr, PRECISION: tl.constexpr, COMPENSATE: tl.constexpr, "
        "PARTIAL: tl.constexpr, UPCAST: tl.constexpr, WIDE: tl.constexpr):",
    ] + [line.format(a=a_param, b=b_param) for line in _PROLOGUE] + tiled
    reduce = [
        "@triton.jit",
        f"def {name}_splitk(ws, SPLITS, numel, {params}, BLOCK: tl.constexpr, WIDE: tl.constexpr):",
    ] + _REDUCE_PROLOGUE + flat
    launcher = _launcher(kernel, group, tuning, index, core.layout, a_param, b_param)
    return Emitted(kernel="\n".join(main) + "\n\n\n" + "\n".join(reduce) + "\n", launcher="\n".join(launcher) + "\n",
                   launcher_name=f"_launch_{index}", inputs=launcher_inputs(kernel), outputs=list(group.outputs),
                   summary=f"{name}: {core.layout} product, epilogue {describe_ops(group.members[1:])}",
                   support=["_splits"])


def _launcher(kernel: Kernel, group: Any, tuning: Tuning, index: int, layout: str, a_param: str,
              b_param: str) -> list[str]:
    lines = kernel.launcher_head(f"_launch_{index}", [])
    lines += [line.format(a=a_param, b=b_param) for line in _GEOMETRY[layout]]
    for position, value in enumerate(group.outputs):
        lines.append(f"    out{position} = torch.empty(out_shape, device=a.device, "
                     f"dtype={kernel.output_dtype(value)})")
    args = call_args(kernel, len(group.outputs), ["M", "N", "K", "*strides"]).split(", ")
    args = ", ".join("a" if arg == a_param else "b" if arg == b_param else arg for arg in args)
    fp32, half = tuning.matmul_fp32, tuning.matmul_half
    lines += [
        "    if a.dtype == torch.float32:  # full fp32 products (no TF32), as the reference computes them",
        f"        BM, BN, BK, warps, stages, precision = {fp32[0]}, {fp32[1]}, {fp32[2]}, {fp32[3]}, {fp32[4]}, 'ieee'",
        "    else:",
        f"        BM, BN, BK, warps, stages, precision = {half[0]}, {half[1]}, {half[2]}, {half[3]}, {half[4]}, 'tf32'",
        "    if a.device.type == 'cpu':  # Triton's interpreter pays per program and per op, not per element",
        "        BM, BN, BK = (max(16, min(256, triton.next_power_of_2(v))) for v in (M, N, K))",
        "    numel = batch * M * N",
        "    wide = max(a.numel(), b.numel(), numel) >= 2**31",
        "    if numel == 0:",
        f"        return {returned(len(group.outputs))}",
        "    tiles = triton.cdiv(M, BM) * triton.cdiv(N, BN)",
        "    splits = _splits(a.device, tiles * batch, K, BK, 64)  # split K when the tiles cannot fill the GPU",
        "    k_split = triton.cdiv(triton.cdiv(K, splits), BK) * BK",
        "    ws = torch.empty((splits, numel), device=a.device, dtype=torch.float32) if splits > 1 else a",
        f"    {kernel.name}[(tiles, batch, splits)](ws, k_split, {args}, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, "
        f"GROUP_M={tuning.group_m}, PRECISION=precision, COMPENSATE=k_split >= {COMPENSATE_FROM_K}, "
        "PARTIAL=splits > 1, UPCAST=a.dtype == torch.bfloat16 and a.device.type == 'cpu', WIDE=wide, "
        "num_warps=warps, num_stages=stages)",
        "    if splits > 1:",
        f"        {kernel.name}_splitk[(triton.cdiv(numel, {tuning.pointwise_block}),)](ws, splits, numel, {args}, "
        f"BLOCK={tuning.pointwise_block}, WIDE=wide or splits * numel >= 2**31, num_warps={tuning.pointwise_warps})",
        f"    return {returned(len(group.outputs))}",
    ]
    return lines
