"""Batch norm (training statistics or running statistics) and scaled dot-product attention in Triton.

Batch norm: in training mode (or without running statistics) one program per channel computes the
batch mean and the biased variance over (N, spatial) in two passes (the variance from centred
values, not E[x^2] - E[x]^2); the running statistics are then updated as ``nn.BatchNorm`` does
(momentum, or the cumulative average when momentum is None; unbiased variance) and a pointwise
kernel normalizes. In eval mode the running statistics are read directly.

Attention: one program per (query block, batch-head) streams the keys in blocks with the online
softmax (running max and sum, the accumulator rescaled as the max grows), fp32 throughout on fp32
inputs; ``is_causal`` masks keys after the query (PyTorch's top-left aligned mask) and skips the
blocks wholly after it.
"""

SOURCE = '''
@triton.jit
def _tk_bn_stats_kernel(x, mean_out, var_out, C, S, COUNT, BLOCK_C: tl.constexpr, BLOCK: tl.constexpr):
    cs = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    c_ok = cs < C
    channel = cs.to(tl.int64)[:, None] * S
    total = tl.zeros([BLOCK_C, BLOCK], dtype=tl.float32)
    for start in range(0, COUNT, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        ok = c_ok[:, None] & (idx < COUNT)[None, :]
        offs = (idx // S).to(tl.int64)[None, :] * C * S + channel + (idx % S)[None, :]
        total += tl.load(x + offs, mask=ok, other=0.0).to(tl.float32)
    mean = tl.sum(total, axis=1) / COUNT
    spread = tl.zeros([BLOCK_C, BLOCK], dtype=tl.float32)
    for start in range(0, COUNT, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        ok = c_ok[:, None] & (idx < COUNT)[None, :]
        offs = (idx // S).to(tl.int64)[None, :] * C * S + channel + (idx % S)[None, :]
        v = tl.load(x + offs, mask=ok, other=0.0).to(tl.float32)
        centred = tl.where(ok, v - mean[:, None], 0.0)
        spread += centred * centred
    tl.store(mean_out + cs, mean, mask=c_ok)
    tl.store(var_out + cs, tl.sum(spread, axis=1) / COUNT, mask=c_ok)


@triton.jit
def _tk_bn_apply_kernel(x, mean, var, weight, bias, out, total, C, S, eps, HAS_WEIGHT: tl.constexpr,
                        HAS_BIAS: tl.constexpr, WIDE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if WIDE:
        offs = offs.to(tl.int64)
    mask = offs < total
    c = (offs // S) % C
    v = tl.load(x + offs, mask=mask, other=0.0).to(tl.float32)
    mu = tl.load(mean + c, mask=mask, other=0.0).to(tl.float32)
    sigma2 = tl.load(var + c, mask=mask, other=1.0).to(tl.float32)
    y = (v - mu) / tl.sqrt(sigma2 + eps)
    if HAS_WEIGHT:
        y = y * tl.load(weight + c, mask=mask, other=1.0).to(tl.float32)
    if HAS_BIAS:
        y = y + tl.load(bias + c, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + offs, y.to(out.dtype.element_ty), mask=mask)


def _tk_batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
                   eps=1e-5):
    x = input.contiguous()
    n, c = x.shape[0], x.shape[1]
    s = x.numel() // max(n * c, 1)
    if training or running_mean is None:
        count = n * s
        if count <= 1 and training:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {tuple(x.shape)}")
        mean = torch.empty(c, device=x.device, dtype=torch.float32)
        var = torch.empty(c, device=x.device, dtype=torch.float32)
        if x.device.type == "cpu":  # the interpreter pays per program: many channels per program, long tiles
            block_c = _tk_next_pow2(c, 1, 64)
            block = _tk_next_pow2(count, 16, max(16, 65536 // block_c))
        else:
            block_c, block = 1, 1024
        _tk_bn_stats_kernel[(triton.cdiv(c, block_c),)](x, mean, var, c, s, count, BLOCK_C=block_c, BLOCK=block)
        if training and running_mean is not None:
            with torch.no_grad():  # the running statistics, updated as nn.BatchNorm does
                running_mean.mul_(1 - momentum).add_(mean.to(running_mean.dtype), alpha=momentum)
                unbiased = var * (count / max(count - 1, 1))
                running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype), alpha=momentum)
    else:
        mean, var = running_mean, running_var
    out = torch.empty_like(x)
    total = x.numel()
    if total:
        block = 65536 if x.device.type == "cpu" else 1024
        _tk_bn_apply_kernel[(triton.cdiv(total, block),)](
            x, mean, var, weight if weight is not None else x, bias if bias is not None else x, out, total, c, s,
            float(eps), HAS_WEIGHT=weight is not None, HAS_BIAS=bias is not None, WIDE=total >= 2**31, BLOCK=block)
    return out


def _tk_bn_module(module, x):
    training = module.training or module.running_mean is None
    momentum = 0.0 if module.momentum is None else module.momentum
    if module.training and module.track_running_stats and module.num_batches_tracked is not None:
        module.num_batches_tracked.add_(1)
        if module.momentum is None:  # cumulative moving average
            momentum = 1.0 / float(module.num_batches_tracked)
    running = not module.training or module.track_running_stats
    return _tk_batch_norm(x, module.running_mean if running else None, module.running_var if running else None,
                          module.weight, module.bias, training, momentum, module.eps)


@triton.jit
def _tk_attention_kernel(q, k, v, out, L, S, E, EV, scale, CAUSAL: tl.constexpr, PRECISION: tl.constexpr,
                         HALF_P: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_E: tl.constexpr,
                         BLOCK_EV: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_e = tl.arange(0, BLOCK_E)
    offs_ev = tl.arange(0, BLOCK_EV)
    m_ok = offs_m < L
    qt = tl.load(q + bh * L * E + offs_m[:, None] * E + offs_e[None, :], mask=m_ok[:, None] & (offs_e[None, :] < E),
                 other=0.0)
    if not HALF_P:
        qt = qt.to(tl.float32)
    best = tl.full([BLOCK_M], float("-inf"), tl.float32)
    denom = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, BLOCK_EV], dtype=tl.float32)
    stop = S
    if CAUSAL:
        stop = tl.minimum(S, (pid_m + 1) * BLOCK_M)
    for start in range(0, stop, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        n_ok = offs_n < S
        kt = tl.load(k + bh * S * E + offs_n[None, :] * E + offs_e[:, None], mask=n_ok[None, :] & (offs_e[:, None] < E),
                     other=0.0)
        if not HALF_P:
            kt = kt.to(tl.float32)
        scores = tl.dot(qt, kt, input_precision=PRECISION) * scale
        valid = n_ok[None, :]
        if CAUSAL:
            valid = valid & (offs_n[None, :] <= offs_m[:, None])
        scores = tl.where(valid, scores, float("-inf"))
        new_best = tl.maximum(best, tl.max(scores, axis=1))
        safe = tl.where(new_best == float("-inf"), 0.0, new_best)  # a row with no key yet
        p = tl.exp(scores - safe[:, None])
        rescale = tl.exp(best - safe)
        denom = denom * rescale + tl.sum(p, axis=1)
        vt = tl.load(v + bh * S * EV + offs_n[:, None] * EV + offs_ev[None, :],
                     mask=n_ok[:, None] & (offs_ev[None, :] < EV), other=0.0)
        if HALF_P:
            p = p.to(vt.dtype)
        else:
            vt = vt.to(tl.float32)
        acc = acc * rescale[:, None] + tl.dot(p, vt, input_precision=PRECISION)
        best = new_best
    result = acc / denom[:, None]
    tl.store(out + bh * L * EV + offs_m[:, None] * EV + offs_ev[None, :], result.to(out.dtype.element_ty),
             mask=m_ok[:, None] & (offs_ev[None, :] < EV))


def _tk_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    if attn_mask is not None or dropout_p or enable_gqa:
        raise ValueError("_tk_sdpa: attn_mask, dropout and grouped-query attention have no Triton rule")
    lead, (L, E), (S, EV) = tuple(query.shape[:-2]), query.shape[-2:], value.shape[-2:]
    q = query.reshape(-1, L, E).contiguous()
    k = key.reshape(-1, S, E).contiguous()
    v = value.reshape(-1, S, EV).contiguous()
    out = torch.empty((q.shape[0], L, EV), device=q.device, dtype=q.dtype)
    if out.numel() == 0 or S == 0:
        return out.reshape(lead + (L, EV))
    scale = 1.0 / math.sqrt(E) if scale is None else scale
    full = q.dtype == torch.float32 or q.device.type == "cpu"
    block_e, block_ev = max(16, triton.next_power_of_2(E)), max(16, triton.next_power_of_2(EV))
    block_m, block_n = (64, 32) if max(block_e, block_ev) <= 128 else (32, 16)
    _tk_attention_kernel[(triton.cdiv(L, block_m), q.shape[0])](
        q, k, v, out, L, S, E, EV, float(scale), CAUSAL=bool(is_causal),
        PRECISION="ieee" if q.dtype == torch.float32 else "tf32", HALF_P=not full, BLOCK_M=block_m, BLOCK_N=block_n,
        BLOCK_E=block_e, BLOCK_EV=block_ev)
    return out.reshape(lead + (L, EV))
'''

FUNCTIONS = {"batch_norm": "_tk_batch_norm", "scaled_dot_product_attention": "_tk_sdpa"}
MODULES = {name: "_tk_bn_module" for name in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d")}


def module_refusal(module) -> str | None:
    return None
