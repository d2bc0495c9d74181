"""Max, average and adaptive-average pooling, 1D/2D/3D, as one Triton kernel each.

Like the convolutions, every pool is written as a 3-D one (size-1 leading spatial dims). One
program computes a block of outputs and walks its window; padding is -inf for max and excluded
or counted for average exactly as PyTorch's ``count_include_pad``, ``ceil_mode`` and
``divisor_override`` say. Sums are fp32, results are stored in the input's dtype.
"""

SOURCE = '''
@triton.jit
def _tk_pool_kernel(x, out, total, D, H, W, OD, OH, OW, KD, KH, KW, SD, SH, SW, PD, PH, PW, DD, DH, DW, DIVISOR,
                    IS_MAX: tl.constexpr, COUNT_PAD: tl.constexpr, HAS_DIVISOR: tl.constexpr, WIDE: tl.constexpr,
                    BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if WIDE:
        offs = offs.to(tl.int64)
    mask = offs < total
    ow = offs % OW
    rest = offs // OW
    oh = rest % OH
    rest = rest // OH
    od = rest % OD
    plane = rest // OD
    base = x + plane * (D * H * W)
    d0 = od * SD - PD
    h0 = oh * SH - PH
    w0 = ow * SW - PW
    if IS_MAX:
        acc = tl.full([BLOCK], float("-inf"), tl.float32)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
    count = tl.zeros([BLOCK], dtype=tl.float32)
    for kd in range(0, KD):
        id_ = d0 + kd * DD
        ok_d = (id_ >= 0) & (id_ < D)
        for kh in range(0, KH):
            ih = h0 + kh * DH
            ok_h = ok_d & (ih >= 0) & (ih < H)
            for kw in range(0, KW):
                iw = w0 + kw * DW
                ok = mask & ok_h & (iw >= 0) & (iw < W)
                if IS_MAX:
                    v = tl.load(base + (id_ * H + ih) * W + iw, mask=ok, other=float("-inf")).to(tl.float32)
                    acc = tl.where((v > acc) | (v != v), v, acc)  # NaN propagates, as in PyTorch
                else:
                    v = tl.load(base + (id_ * H + ih) * W + iw, mask=ok, other=0.0).to(tl.float32)
                    acc += v
                    count += ok.to(tl.float32)
    if IS_MAX:
        result = acc
    elif HAS_DIVISOR:
        result = acc / DIVISOR
    elif COUNT_PAD:  # the window clipped to the padded input, padding counted
        size = (tl.minimum(d0 + KD, D + PD) - d0) * (tl.minimum(h0 + KH, H + PH) - h0) * (tl.minimum(w0 + KW, W + PW) - w0)
        result = acc / size.to(tl.float32)
    else:
        result = acc / tl.maximum(count, 1.0)
    tl.store(out + offs, result.to(out.dtype.element_ty), mask=mask)


@triton.jit
def _tk_adaptive_avg_kernel(x, out, total, D, H, W, OD, OH, OW, KD, KH, KW, WIDE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if WIDE:
        offs = offs.to(tl.int64)
    mask = offs < total
    ow = offs % OW
    rest = offs // OW
    oh = rest % OH
    rest = rest // OH
    od = rest % OD
    plane = rest // OD
    base = x + plane * (D * H * W)
    # window [floor(o * I / O), ceil((o + 1) * I / O)) per dim; KD/KH/KW bound its length
    d0 = (od * D) // OD
    d1 = ((od + 1) * D + OD - 1) // OD
    h0 = (oh * H) // OH
    h1 = ((oh + 1) * H + OH - 1) // OH
    w0 = (ow * W) // OW
    w1 = ((ow + 1) * W + OW - 1) // OW
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for kd in range(0, KD):
        for kh in range(0, KH):
            for kw in range(0, KW):
                ok = mask & (d0 + kd < d1) & (h0 + kh < h1) & (w0 + kw < w1)
                acc += tl.load(base + ((d0 + kd) * H + h0 + kh) * W + w0 + kw, mask=ok, other=0.0).to(tl.float32)
    size = ((d1 - d0) * (h1 - h0) * (w1 - w0)).to(tl.float32)
    tl.store(out + offs, (acc / size).to(out.dtype.element_ty), mask=mask)


def _tk_pool_size(i, k, s, p, d, ceil_mode):
    span = i + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= i + p:  # the last window must start inside the input or left padding
        out -= 1
    return out


def _tk_pool(x, rank, is_max, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
             count_include_pad=True, divisor_override=None):
    if x.dim() == rank + 1:  # an unbatched input
        return _tk_pool(x.unsqueeze(0), rank, is_max, kernel_size, stride, padding, dilation, ceil_mode,
                        count_include_pad, divisor_override).squeeze(0)
    ks = _tk_tuple(kernel_size, rank)
    st = _tk_tuple(stride if stride not in (None, []) else ks, rank)
    pd, dl = _tk_tuple(padding, rank), _tk_tuple(dilation, rank)
    x = x.contiguous()
    lead, spatial = tuple(x.shape[:-rank]), tuple(x.shape[-rank:])
    out_sp = tuple(_tk_pool_size(i, k, s, p, d, ceil_mode) for i, k, s, p, d in zip(spatial, ks, st, pd, dl))
    out = torch.empty(lead + out_sp, device=x.device, dtype=x.dtype)
    total = out.numel()
    if total == 0:
        return out
    block = 65536 if x.device.type == "cpu" else 256  # the interpreter pays per program, not per element
    _tk_pool_kernel[(triton.cdiv(total, block),)](
        x, out, total, *_tk_3d(spatial, 1), *_tk_3d(out_sp, 1), *_tk_3d(ks, 1), *_tk_3d(st, 1), *_tk_3d(pd, 0),
        *_tk_3d(dl, 1), float(divisor_override or 1), IS_MAX=is_max, COUNT_PAD=bool(count_include_pad),
        HAS_DIVISOR=bool(divisor_override), WIDE=max(x.numel(), total) >= 2**31, BLOCK=block)
    return out


def _tk_adaptive_avg(x, rank, output_size):
    if x.dim() == rank + 1:
        return _tk_adaptive_avg(x.unsqueeze(0), rank, output_size).squeeze(0)
    x = x.contiguous()
    lead, spatial = tuple(x.shape[:-rank]), tuple(x.shape[-rank:])
    wanted = _tk_tuple(output_size, rank) if not isinstance(output_size, int) else (output_size,) * rank
    out_sp = tuple(i if o is None else o for i, o in zip(spatial, wanted))
    out = torch.empty(lead + out_sp, device=x.device, dtype=x.dtype)
    total = out.numel()
    if total == 0:
        return out
    longest = tuple(-(-i // o) + 1 for i, o in zip(spatial, out_sp))  # the longest window, plus one for rounding
    block = 65536 if x.device.type == "cpu" else 256  # the interpreter pays per program, not per element
    _tk_adaptive_avg_kernel[(triton.cdiv(total, block),)](
        x, out, total, *_tk_3d(spatial, 1), *_tk_3d(out_sp, 1), *_tk_3d(longest, 1),
        WIDE=max(x.numel(), total) >= 2**31, BLOCK=block)
    return out


def _tk_max_pool(rank):
    def pool(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
        if return_indices:
            raise ValueError("_tk_max_pool: return_indices has no Triton rule")
        return _tk_pool(input, rank, True, kernel_size, stride, padding, dilation, ceil_mode)
    return pool


def _tk_avg_pool(rank):
    def pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
             divisor_override=None):
        return _tk_pool(input, rank, False, kernel_size, stride, padding, 1, ceil_mode, count_include_pad,
                        divisor_override)
    return pool


def _tk_adaptive_avg_pool(rank):
    return lambda input, output_size: _tk_adaptive_avg(input, rank, output_size)


_tk_max_pool1d, _tk_max_pool2d, _tk_max_pool3d = _tk_max_pool(1), _tk_max_pool(2), _tk_max_pool(3)
_tk_avg_pool1d, _tk_avg_pool2d, _tk_avg_pool3d = _tk_avg_pool(1), _tk_avg_pool(2), _tk_avg_pool(3)
_tk_adaptive_avg_pool1d, _tk_adaptive_avg_pool2d, _tk_adaptive_avg_pool3d = (
    _tk_adaptive_avg_pool(1), _tk_adaptive_avg_pool(2), _tk_adaptive_avg_pool(3))


def _tk_pool_module(module, x):
    name = type(module).__name__
    rank = int(name[-2])
    if name.startswith("MaxPool"):
        return _tk_max_pool(rank)(x, module.kernel_size, module.stride, module.padding, module.dilation,
                                  module.ceil_mode, module.return_indices)
    if name.startswith("AvgPool"):
        return _tk_avg_pool(rank)(x, module.kernel_size, module.stride, module.padding, module.ceil_mode,
                                  module.count_include_pad, getattr(module, "divisor_override", None))
    return _tk_adaptive_avg(x, rank, module.output_size)
'''

FUNCTIONS = {f"{kind}_pool{rank}d": f"_tk_{kind}_pool{rank}d" for kind in ("max", "avg", "adaptive_avg")
             for rank in (1, 2, 3)}
MODULES = {f"{kind}Pool{rank}d": "_tk_pool_module" for kind in ("Max", "Avg", "AdaptiveAvg") for rank in (1, 2, 3)}


def module_refusal(module) -> str | None:
    if getattr(module, "return_indices", False):
        return f"nn.{type(module).__name__} with return_indices=True"
    return None
