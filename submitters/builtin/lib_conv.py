"""Convolutions as implicit GEMM: one Triton kernel for 1D/2D/3D, transposed, grouped, dilated, strided, padded.

Every convolution is written as a 3-D one (a 1-D or 2-D input gets size-1 leading spatial dims).
The product is ``out[m, n] = sum_k A[m, k] * B[k, n]`` with m an output position (batch and
spatial), n an output channel of the group and k an (input channel, kernel offset) pair; A is
gathered from the input on the fly (zero outside the padding), B is the weight read in place.
A transposed convolution gathers too: output position o takes input i = (o + p - k*d) / s where
that division is exact, so no scatter and no atomics are needed. Sums are fp32 (IEEE fp32 products
for fp32 inputs, as TF32 is off in the reference), the bias is added to the accumulator, the
result is stored once in the input's dtype.

``SOURCE`` is Python source pasted into the generated file; it defines ``_tk_conv`` (the
functional form) and ``_tk_conv_module`` (reads a ``nn.Conv*``/``nn.ConvTranspose*`` at run time).
"""

SOURCE = '''
@triton.jit
def _tk_conv_kernel(x, w, bias, out, N, C_G, D, H, W, OD, OH, OW, COUT_G, KD, KH, KW, SD, SH, SW, PD, PH, PW,
                    DD, DH, DW, HAS_BIAS: tl.constexpr, TRANSPOSED: tl.constexpr, PRECISION: tl.constexpr,
                    UPCAST: tl.constexpr, WIDE: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    g = tl.program_id(2)
    groups = tl.num_programs(2)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    if WIDE:  # tensors beyond 2**31 elements: 64-bit offsets
        offs_m = offs_m.to(tl.int64)
        g = g.to(tl.int64)
    M = N * OD * OH * OW
    KK = KD * KH * KW
    K = C_G * KK
    ow = offs_m % OW
    rest = offs_m // OW
    oh = rest % OH
    rest = rest // OH
    od = rest % OD
    nb = rest // OD
    m_ok = offs_m < M
    n_ok = offs_n < COUT_G
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        k_ok = offs_k < K
        ci = offs_k // KK
        r = offs_k % KK
        kd = r // (KH * KW)
        kh = (r // KW) % KH
        kw = r % KW
        if TRANSPOSED:  # input i feeds output i*s - p + k*d: gather where (o + p - k*d) is a multiple of s
            td = od[:, None] + PD - kd[None, :] * DD
            th = oh[:, None] + PH - kh[None, :] * DH
            tw = ow[:, None] + PW - kw[None, :] * DW
            id_ = td // SD
            ih = th // SH
            iw = tw // SW
            ok = (td >= 0) & (td % SD == 0) & (id_ < D) & (th >= 0) & (th % SH == 0) & (ih < H)
            ok = ok & (tw >= 0) & (tw % SW == 0) & (iw < W)
        else:
            id_ = od[:, None] * SD - PD + kd[None, :] * DD
            ih = oh[:, None] * SH - PH + kh[None, :] * DH
            iw = ow[:, None] * SW - PW + kw[None, :] * DW
            ok = (id_ >= 0) & (id_ < D) & (ih >= 0) & (ih < H) & (iw >= 0) & (iw < W)
        chan = g * C_G + ci
        a_ptr = x + (((nb[:, None] * (C_G * groups) + chan[None, :]) * D + id_) * H + ih) * W + iw
        a = tl.load(a_ptr, mask=ok & m_ok[:, None] & k_ok[None, :], other=0.0)
        if TRANSPOSED:  # weight (C_in, C_out / groups, kD, kH, kW)
            b_ptr = w + ((g * C_G + ci[:, None]) * COUT_G + offs_n[None, :]) * KK + r[:, None]
        else:  # weight (C_out, C_in / groups, kD, kH, kW)
            b_ptr = w + (g * COUT_G + offs_n[None, :]) * K + offs_k[:, None]
        b = tl.load(b_ptr, mask=k_ok[:, None] & n_ok[None, :], other=0.0)
        if UPCAST:  # bf16 on the CPU: Triton's interpreter multiplies bf16 tiles wrongly, fp32 does not
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, input_precision=PRECISION)
    if HAS_BIAS:
        acc += tl.load(bias + g * COUT_G + offs_n, mask=n_ok, other=0.0).to(tl.float32)[None, :]
    cout = g * COUT_G + offs_n
    o_ptr = out + (((nb[:, None] * (COUT_G * groups) + cout[None, :]) * OD + od[:, None]) * OH + oh[:, None]) * OW \\
        + ow[:, None]
    tl.store(o_ptr, acc.to(out.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


@triton.jit
def _tk_depthwise_kernel(x, w, bias, out, total, C, MULT, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW,
                         DD, DH, DW, HAS_BIAS: tl.constexpr, WIDE: tl.constexpr, BLOCK: tl.constexpr):
    # one input channel per group (depthwise, channel multiplier MULT): a direct window sum per output
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if WIDE:
        offs = offs.to(tl.int64)
    mask = offs < total
    ow = offs % OW
    rest = offs // OW
    oh = rest % OH
    rest = rest // OH
    od = rest % OD
    rest = rest // OD
    co = rest % (C * MULT)
    nb = rest // (C * MULT)
    base = x + (nb * C + co // MULT) * (D * H * W)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for kd in range(0, KD):
        id_ = od * SD - PD + kd * DD
        ok_d = (id_ >= 0) & (id_ < D)
        for kh in range(0, KH):
            ih = oh * SH - PH + kh * DH
            ok_h = ok_d & (ih >= 0) & (ih < H)
            for kw in range(0, KW):
                iw = ow * SW - PW + kw * DW
                ok = mask & ok_h & (iw >= 0) & (iw < W)
                v = tl.load(base + (id_ * H + ih) * W + iw, mask=ok, other=0.0).to(tl.float32)
                wv = tl.load(w + co * (KD * KH * KW) + (kd * KH + kh) * KW + kw, mask=mask, other=0.0).to(tl.float32)
                acc += v * wv
    if HAS_BIAS:
        acc += tl.load(bias + co, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + offs, acc.to(out.dtype.element_ty), mask=mask)


def _tk_conv(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, transposed=False, output_padding=0):
    rank = x.dim() - 2
    if rank not in (1, 2, 3) or weight.dim() != rank + 2:
        raise ValueError(f"_tk_conv: a {rank}-D convolution of a {tuple(x.shape)} input is not supported")
    kernel = tuple(weight.shape[2:])
    st, dl = _tk_tuple(stride, rank), _tk_tuple(dilation, rank)
    if isinstance(padding, str) and padding == "valid":
        padding = 0
    same = isinstance(padding, str) and padding == "same"
    if same:  # stride 1: the left padding; the right side is covered by the bounds masks
        padding = tuple(d * (k - 1) // 2 for d, k in zip(dl, kernel))
    pd, op = _tk_tuple(padding, rank), _tk_tuple(output_padding, rank)
    x = x.contiguous()
    weight = weight.contiguous()
    n, spatial = x.shape[0], tuple(x.shape[2:])
    if transposed:
        c_g, cout_g = weight.shape[0] // groups, weight.shape[1]
        out_sp = tuple((i - 1) * s - 2 * p + d * (k - 1) + o + 1 for i, s, p, d, k, o in zip(spatial, st, pd, dl, kernel, op))
    else:
        c_g, cout_g = weight.shape[1], weight.shape[0] // groups
        out_sp = tuple((i + 2 * p - d * (k - 1) - 1) // s + 1 for i, s, p, d, k in zip(spatial, st, pd, dl, kernel))
        out_sp = spatial if same else out_sp
    out = torch.empty((n, cout_g * groups) + out_sp, device=x.device, dtype=x.dtype)
    if out.numel() == 0:
        return out
    if c_g == 1 and not transposed:  # depthwise: a direct window sum beats a GEMM with a K of a few taps
        total = out.numel()
        block = 65536 if x.device.type == "cpu" else 256  # the interpreter pays per program and op
        _tk_depthwise_kernel[(triton.cdiv(total, block),)](
            x, weight, bias if bias is not None else weight, out, total, groups, cout_g, *_tk_3d(spatial, 1),
            *_tk_3d(out_sp, 1), *_tk_3d(kernel, 1), *_tk_3d(st, 1), *_tk_3d(pd, 0), *_tk_3d(dl, 1),
            HAS_BIAS=bias is not None, WIDE=max(x.numel(), total) >= 2**31, BLOCK=block)
        return out
    size_k = c_g * math.prod(kernel)
    if x.dtype == torch.float32:  # full fp32 products (no TF32), as the reference computes them
        precision, block_m = "ieee", 64
    else:
        precision, block_m = "tf32", 128
    block_n = _tk_next_pow2(cout_g, 16, 64)
    block_k = _tk_next_pow2(size_k, 16, 32)
    if x.device.type == "cpu":  # Triton's interpreter pays per program and per op, not per element: big tiles
        block_n, block_k = _tk_next_pow2(cout_g, 16, 128), _tk_next_pow2(size_k, 16, 256)
        block_m = _tk_next_pow2(n * math.prod(out_sp), 16, max(1024, 262144 // block_k))
    m = n * math.prod(out_sp)
    grid = (triton.cdiv(m, block_m), triton.cdiv(cout_g, block_n), groups)
    wide = max(x.numel(), out.numel(), weight.numel()) >= 2**31
    _tk_conv_kernel[grid](
        x, weight, bias if bias is not None else weight, out, n, c_g, *_tk_3d(spatial, 1), *_tk_3d(out_sp, 1),
        cout_g, *_tk_3d(kernel, 1), *_tk_3d(st, 1), *_tk_3d(pd, 0), *_tk_3d(dl, 1), HAS_BIAS=bias is not None,
        TRANSPOSED=bool(transposed), PRECISION=precision,
        UPCAST=x.dtype == torch.bfloat16 and x.device.type == "cpu", WIDE=wide, BLOCK_M=block_m,
        BLOCK_N=block_n, BLOCK_K=block_k)
    return out


def _tk_conv_module(module, x, output_size=None):
    transposed = isinstance(module, nn.modules.conv._ConvTransposeNd)
    output_padding = module.output_padding
    if transposed and output_size is not None:
        output_padding = module._output_padding(x, output_size, module.stride, module.padding, module.kernel_size,
                                                len(module.kernel_size), module.dilation)
    return _tk_conv(x, module.weight, module.bias, module.stride, module.padding, module.dilation, module.groups,
                    transposed, output_padding)


def _tk_conv_transpose(x, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _tk_conv(x, weight, bias, stride, padding, dilation, groups, True, output_padding)
'''

FUNCTIONS = {
    "conv1d": "_tk_conv", "conv2d": "_tk_conv", "conv3d": "_tk_conv",
    "conv_transpose1d": "_tk_conv_transpose", "conv_transpose2d": "_tk_conv_transpose",
    "conv_transpose3d": "_tk_conv_transpose",
}
MODULES = {name: "_tk_conv_module" for name in
           ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")}


def module_refusal(module) -> str | None:
    """Why a convolution module has no rule (None when it has one)."""
    if getattr(module, "padding_mode", "zeros") != "zeros":
        return f"nn.{type(module).__name__} with padding_mode={module.padding_mode!r}"
    return None
