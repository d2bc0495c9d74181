"""Recurrent layers (LSTM, GRU, RNN) and transformer blocks (MultiheadAttention, TransformerEncoderLayer,
TransformerEncoder) written with Triton kernels.

Recurrence: the input projection of a whole layer is one Triton product (``x @ W_ih^T + b_ih``);
then one Triton kernel per time step computes ``h @ W_hh^T`` for every gate (fp32 accumulation)
and the gate arithmetic (LSTM: i, f, g, o and the cell; GRU: r, z and n with ``r * (W_hn h + b_hn)``;
RNN: tanh or relu), writing the new state and its slot of the output sequence. Bidirectional
layers run the reverse direction over reversed time; stacked layers feed the next one.

Transformer blocks: in/out projections and the feed-forward layers are the Triton product (with
relu/gelu and a residual add in its epilogue), attention is ``_tk_sdpa`` (online softmax), and the
post-norm residual ``LayerNorm(x + y)`` is one Triton row kernel. Tensor reshapes between them stay
PyTorch views. Modules the templates do not cover (projections, dropout in training, norm-first,
key/value biases) are left to PyTorch by the writer (see ``module_refusal``).
"""

SOURCE = '''
@triton.jit
def _tk_linear_kernel(a, w, bias, res, out, M, N, K, ACT: tl.constexpr, HAS_BIAS: tl.constexpr,
                      HAS_RES: tl.constexpr, PRECISION: tl.constexpr, UPCAST: tl.constexpr, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_m = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(a + offs_m[:, None] * K + offs_k[None, :], mask=(offs_m[:, None] < M) & (offs_k[None, :] < K),
                    other=0.0)
        y = tl.load(w + offs_n[None, :] * K + offs_k[:, None], mask=(offs_k[:, None] < K) & (offs_n[None, :] < N),
                    other=0.0)
        if UPCAST:
            x = x.to(tl.float32)
            y = y.to(tl.float32)
        acc = tl.dot(x, y, acc, input_precision=PRECISION)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    if HAS_BIAS:
        acc += tl.load(bias + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)[None, :]
    if ACT == 1:
        acc = tl.maximum(acc, 0.0)
    if ACT == 2:
        acc = 0.5 * acc * (1.0 + tl.erf(acc * 0.7071067811865476))
    if HAS_RES:
        acc += tl.load(res + offs_m[:, None] * N + offs_n[None, :], mask=mask, other=0.0).to(tl.float32)
    tl.store(out + offs_m[:, None] * N + offs_n[None, :], acc.to(out.dtype.element_ty), mask=mask)


def _tk_linear(x, weight, bias=None, act=0, residual=None):
    """x @ weight.T + bias, then relu (act 1) or erf-gelu (act 2), then + residual; over x's last dim."""
    lead, k = tuple(x.shape[:-1]), x.shape[-1]
    a = x.reshape(-1, k).contiguous()
    w = weight.contiguous()
    m, n = a.shape[0], w.shape[0]
    out = torch.empty((m, n), device=x.device, dtype=x.dtype)
    if out.numel():
        res = residual.reshape(m, n).contiguous() if residual is not None else out
        cpu = x.device.type == "cpu"
        if cpu:  # the interpreter pays per program and per op, not per element: big tiles
            bm, bn, bk = _tk_next_pow2(m, 16, 256), _tk_next_pow2(n, 16, 256), _tk_next_pow2(k, 16, 256)
        else:
            bm, bn, bk = 64, 64, 32
        _tk_linear_kernel[(triton.cdiv(m, bm), triton.cdiv(n, bn))](
            a, w, bias if bias is not None else w, res, out, m, n, k, ACT=act, HAS_BIAS=bias is not None,
            HAS_RES=residual is not None, PRECISION="ieee" if x.dtype == torch.float32 else "tf32",
            UPCAST=x.dtype == torch.bfloat16 and cpu, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk)
    return out.reshape(lead + (n,))


@triton.jit
def _tk_hh_gate(h, w_hh, gate, B, H, offs_b, offs_j, PRECISION: tl.constexpr, BLOCK_B: tl.constexpr,
                BLOCK_H: tl.constexpr, BLOCK_K: tl.constexpr):
    # h @ W_hh[gate*H:(gate+1)*H]^T for a [BLOCK_B, BLOCK_H] tile
    acc = tl.zeros([BLOCK_B, BLOCK_H], dtype=tl.float32)
    for k0 in range(0, H, BLOCK_K):
        offs_k = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(h + offs_b[:, None] * H + offs_k[None, :], mask=(offs_b[:, None] < B) & (offs_k[None, :] < H),
                    other=0.0).to(tl.float32)
        y = tl.load(w_hh + (gate * H + offs_j[None, :]) * H + offs_k[:, None],
                    mask=(offs_k[:, None] < H) & (offs_j[None, :] < H), other=0.0).to(tl.float32)
        acc = tl.dot(x, y, acc, input_precision=PRECISION)
    return acc


@triton.jit
def _tk_gate_in(xp, b_hh, gate, G, H, offs_b, offs_j, mask, HAS_BIAS: tl.constexpr):
    # the input projection of this step (b_ih included) plus b_hh for one gate
    v = tl.load(xp + offs_b[:, None] * (G * H) + gate * H + offs_j[None, :], mask=mask, other=0.0).to(tl.float32)
    if HAS_BIAS:
        v += tl.load(b_hh + gate * H + offs_j, mask=offs_j < H, other=0.0).to(tl.float32)[None, :]
    return v


@triton.jit
def _tk_rnn_step_kernel(xp, h, c, w_hh, b_hh, b_hn, h_out, c_out, seq, seq_stride, B, H, MODE: tl.constexpr,
                        HAS_BIAS: tl.constexpr, PRECISION: tl.constexpr, BLOCK_B: tl.constexpr,
                        BLOCK_H: tl.constexpr, BLOCK_K: tl.constexpr):
    offs_b = tl.program_id(0) * BLOCK_B + tl.arange(0, BLOCK_B)
    offs_j = tl.program_id(1) * BLOCK_H + tl.arange(0, BLOCK_H)
    mask = (offs_b[:, None] < B) & (offs_j[None, :] < H)
    state = offs_b[:, None] * H + offs_j[None, :]
    if MODE == 0:  # LSTM: gates i, f, g, o
        gi = _tk_gate_in(xp, b_hh, 0, 4, H, offs_b, offs_j, mask, HAS_BIAS) + _tk_hh_gate(
            h, w_hh, 0, B, H, offs_b, offs_j, PRECISION, BLOCK_B, BLOCK_H, BLOCK_K)
        gf = _tk_gate_in(xp, b_hh, 1, 4, H, offs_b, offs_j, mask, HAS_BIAS) + _tk_hh_gate(
            h, w_hh, 1, B, H, offs_b, offs_j, PRECISION, BLOCK_B, BLOCK_H, BLOCK_K)
        gg = _tk_gate_in(xp, b_hh, 2, 4, H, offs_b, offs_j, mask, HAS_BIAS) + _tk_hh_gate(
            h, w_hh, 2, B, H, offs_b, offs_j, PRECISION, BLOCK_B, BLOCK_H, BLOCK_K)
        go = _tk_gate_in(xp, b_hh, 3, 4, H, offs_b, offs_j, mask, HAS_BIAS) + _tk_hh_gate(
            h, w_hh, 3, B, H, offs_b, offs_j, PRECISION, BLOCK_B, BLOCK_H, BLOCK_K)
        cell = tl.load(c + state, mask=mask, other=0.0).to(tl.float32)
        g_act = 2.0 * tl.sigmoid(2.0 * gg) - 1.0
        cell = tl.sigmoid(gf) * cell + tl.sigmoid(gi) * g_act
        new_h = tl.sigmoid(go) * (2.0 * tl.sigmoid(2.0 * cell) - 1.0)
        tl.store(c_out + state, cell.to(c_out.dtype.element_ty), mask=mask)
    elif MODE == 1:  # GRU: r, z from input + hidden, n = tanh(x_n + r * (W_hn h + b_hn))
        r = tl.sigmoid(_tk_gate_in(xp, b_hh, 0, 3, H, offs_b, offs_j, mask, HAS_BIAS) + _tk_hh_gate(
            h, w_hh, 0, B, H, offs_b, offs_j, PRECISION, BLOCK_B, BLOCK_H, BLOCK_K))
        z = tl.sigmoid(_tk_gate_in(xp, b_hh, 1, 3, H, offs_b, offs_j, mask, HAS_BIAS) + _tk_hh_gate(
            h, w_hh, 1, B, H, offs_b, offs_j, PRECISION, BLOCK_B, BLOCK_H, BLOCK_K))
        hn = _tk_hh_gate(h, w_hh, 2, B, H, offs_b, offs_j, PRECISION, BLOCK_B, BLOCK_H, BLOCK_K)
        if HAS_BIAS:
            hn += tl.load(b_hn + offs_j, mask=offs_j < H, other=0.0).to(tl.float32)[None, :]
        xn = tl.load(xp + offs_b[:, None] * (3 * H) + 2 * H + offs_j[None, :], mask=mask, other=0.0).to(tl.float32)
        n = 2.0 * tl.sigmoid(2.0 * (xn + r * hn)) - 1.0
        old = tl.load(h + state, mask=mask, other=0.0).to(tl.float32)
        new_h = (1.0 - z) * n + z * old
    else:  # RNN: tanh (MODE 2) or relu (MODE 3)
        pre = _tk_gate_in(xp, b_hh, 0, 1, H, offs_b, offs_j, mask, HAS_BIAS) + _tk_hh_gate(
            h, w_hh, 0, B, H, offs_b, offs_j, PRECISION, BLOCK_B, BLOCK_H, BLOCK_K)
        if MODE == 2:
            new_h = 2.0 * tl.sigmoid(2.0 * pre) - 1.0
        else:
            new_h = tl.maximum(pre, 0.0)
    tl.store(h_out + state, new_h.to(h_out.dtype.element_ty), mask=mask)
    tl.store(seq + offs_b[:, None] * seq_stride + offs_j[None, :], new_h.to(seq.dtype.element_ty), mask=mask)


def _tk_rnn_direction(module, xp, h, c, mode, suffix, out_slot, reverse):
    steps, batch, hidden = xp.shape[0], h.shape[0], h.shape[1]
    w_hh = getattr(module, "weight_hh" + suffix).contiguous()
    b_hh = getattr(module, "bias_hh" + suffix) if module.bias else None
    b_hn = b_hh[2 * hidden:] if b_hh is not None and mode == 1 else b_hh
    if h.device.type == "cpu":  # the interpreter pays per program and per op: one tile for the whole state
        block_b, block_h, block_k = _tk_next_pow2(batch, 16, 64), _tk_next_pow2(hidden, 16, 256), \
            _tk_next_pow2(hidden, 16, 256)
    else:
        block_b, block_h, block_k = 16, 64, 32
    grid = (triton.cdiv(batch, block_b), triton.cdiv(hidden, block_h))
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        new_h = torch.empty_like(h)
        new_c = torch.empty_like(c) if c is not None else new_h
        _tk_rnn_step_kernel[grid](
            xp[t], h, c if c is not None else h, w_hh, b_hh if b_hh is not None else w_hh,
            b_hn if b_hn is not None else w_hh, new_h, new_c, out_slot[t], out_slot.stride(1), batch, hidden,
            MODE=mode, HAS_BIAS=b_hh is not None, PRECISION="ieee" if h.dtype == torch.float32 else "tf32",
            BLOCK_B=block_b, BLOCK_H=block_h, BLOCK_K=block_k)
        h, c = new_h, (new_c if c is not None else None)
    return h, c


def _tk_rnn_module(module, input, hx=None):
    name = type(module).__name__
    mode = {"LSTM": 0, "GRU": 1}.get(name, 2 if getattr(module, "nonlinearity", "tanh") == "tanh" else 3)
    gates = (4, 3, 1, 1)[mode]
    unbatched = input.dim() == 2
    x = input.unsqueeze(1) if unbatched else (input.transpose(0, 1) if module.batch_first else input)
    steps, batch, hidden = x.shape[0], x.shape[1], module.hidden_size
    dirs = 2 if module.bidirectional else 1
    shape = (module.num_layers * dirs, batch, hidden)
    if hx is None:
        h0 = torch.zeros(shape, device=x.device, dtype=x.dtype)
        c0 = torch.zeros(shape, device=x.device, dtype=x.dtype) if mode == 0 else None
    else:
        h0, c0 = (hx if mode == 0 else (hx, None))
        if unbatched:
            h0, c0 = h0.unsqueeze(1), (c0.unsqueeze(1) if c0 is not None else None)
    layer_in, h_n, c_n = x, [], []
    for layer in range(module.num_layers):
        out = torch.empty((steps, batch, dirs * hidden), device=x.device, dtype=x.dtype)
        for d in range(dirs):
            suffix = f"_l{layer}" + ("_reverse" if d else "")
            b_ih = getattr(module, "bias_ih" + suffix) if module.bias else None
            xp = _tk_linear(layer_in, getattr(module, "weight_ih" + suffix), b_ih).reshape(steps, batch, gates * hidden)
            index = layer * dirs + d
            h, c = _tk_rnn_direction(module, xp, h0[index].contiguous(),
                                     c0[index].contiguous() if c0 is not None else None, mode, suffix,
                                     out[:, :, d * hidden:(d + 1) * hidden], d == 1)
            h_n.append(h)
            c_n.append(c)
        layer_in = out
    output = layer_in.squeeze(1) if unbatched else (layer_in.transpose(0, 1) if module.batch_first else layer_in)
    h_n = torch.stack(h_n)
    h_n = h_n.squeeze(1) if unbatched else h_n
    if mode == 0:
        c_n = torch.stack(c_n)
        return output, (h_n, c_n.squeeze(1) if unbatched else c_n)
    return output, h_n


@triton.jit
def _tk_add_layer_norm_kernel(x, y, weight, bias, out, N, eps, HAS_Y: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < N
    v = tl.load(x + row * N + offs, mask=mask, other=0.0).to(tl.float32)
    if HAS_Y:
        v += tl.load(y + row * N + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / N
    centred = tl.where(mask, v - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(centred * centred, axis=0) / N + eps)
    result = centred * rstd * tl.load(weight + offs, mask=mask, other=1.0).to(tl.float32) \\
        + tl.load(bias + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(out + row * N + offs, result.to(out.dtype.element_ty), mask=mask)


def _tk_add_layer_norm(x, y, norm):
    """LayerNorm(x + y) over the last dim (y may be None), with the norm module's weight and bias."""
    n = x.shape[-1]
    a = x.contiguous()
    out = torch.empty_like(a)
    rows = a.numel() // max(n, 1)
    if rows:
        _tk_add_layer_norm_kernel[(rows,)](a, y.contiguous() if y is not None else a, norm.weight, norm.bias, out, n,
                                           float(norm.eps), HAS_Y=y is not None, BLOCK=triton.next_power_of_2(n))
    return out


def _tk_mha(module, query, key, value):
    """nn.MultiheadAttention without masks: (attn_output, None)."""
    if module.batch_first:
        query, key, value = (t.transpose(0, 1) for t in (query, key, value))
    length, batch, embed = query.shape
    heads = module.num_heads
    w, b = module.in_proj_weight, module.in_proj_bias
    parts = [None if b is None else b[i * embed:(i + 1) * embed] for i in range(3)]
    q = _tk_linear(query, w[:embed], parts[0])
    k = _tk_linear(key, w[embed:2 * embed], parts[1])
    v = _tk_linear(value, w[2 * embed:], parts[2])
    split = lambda t: t.reshape(t.shape[0], batch * heads, embed // heads).transpose(0, 1)  # noqa: E731
    attended = _tk_sdpa(split(q), split(k), split(v))  # (batch*heads, L, head_dim)
    attended = attended.transpose(0, 1).reshape(length, batch, embed)
    out = _tk_linear(attended, module.out_proj.weight, module.out_proj.bias)
    return (out.transpose(0, 1) if module.batch_first else out), None


def _tk_mha_module(module, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                   average_attn_weights=True, is_causal=False):
    if key_padding_mask is not None or attn_mask is not None or is_causal:
        raise ValueError("_tk_mha_module: masks have no Triton rule")
    return _tk_mha(module, query, key, value)


def _tk_encoder_layer(layer, src):
    act = 1 if layer.activation is torch.nn.functional.relu or isinstance(layer.activation, nn.ReLU) else 2
    attended = _tk_mha(layer.self_attn, src, src, src)[0]
    x = _tk_add_layer_norm(src, attended, layer.norm1)
    hidden = _tk_linear(x, layer.linear1.weight, layer.linear1.bias, act=act)
    return _tk_add_layer_norm(x, _tk_linear(hidden, layer.linear2.weight, layer.linear2.bias), layer.norm2)


def _tk_encoder_layer_module(layer, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
    if src_mask is not None or src_key_padding_mask is not None or is_causal:
        raise ValueError("_tk_encoder_layer_module: masks have no Triton rule")
    return _tk_encoder_layer(layer, src)


def _tk_encoder_module(encoder, src, mask=None, src_key_padding_mask=None, is_causal=None):
    if mask is not None or src_key_padding_mask is not None or is_causal:
        raise ValueError("_tk_encoder_module: masks have no Triton rule")
    x = src
    for layer in encoder.layers:
        x = _tk_encoder_layer(layer, x)
    return _tk_add_layer_norm(x, None, encoder.norm) if encoder.norm is not None else x
'''

FUNCTIONS: dict = {}
MODULES = {"LSTM": "_tk_rnn_module", "GRU": "_tk_rnn_module", "RNN": "_tk_rnn_module",
           "MultiheadAttention": "_tk_mha_module", "TransformerEncoderLayer": "_tk_encoder_layer_module",
           "TransformerEncoder": "_tk_encoder_module"}
NEEDS = ("_tk_sdpa",)  # the attention template of lib_norm_attention


def module_refusal(module) -> str | None:
    import torch.nn as nn

    name = type(module).__name__
    if name in ("LSTM", "GRU", "RNN"):
        if getattr(module, "proj_size", 0) or (module.dropout and module.training and module.num_layers > 1):
            return f"nn.{name} with projections or dropout in training"
        return None
    if name == "MultiheadAttention":
        return _attention_refusal(module)
    layers = list(module.layers) if name == "TransformerEncoder" else [module]
    if name == "TransformerEncoder" and module.norm is not None and not isinstance(module.norm, nn.LayerNorm):
        return "nn.TransformerEncoder with a norm other than LayerNorm"
    for layer in layers:
        why = _attention_refusal(layer.self_attn)
        if why:
            return why
        if layer.norm_first or any(d.p and layer.training for d in (layer.dropout, layer.dropout1, layer.dropout2)):
            return "nn.TransformerEncoderLayer with norm_first or dropout in training"
        if not (layer.activation is nn.functional.relu or layer.activation is nn.functional.gelu
                or isinstance(layer.activation, (nn.ReLU, nn.GELU))):
            return "nn.TransformerEncoderLayer with another activation"
        if isinstance(layer.activation, nn.GELU) and layer.activation.approximate != "none":
            return "nn.TransformerEncoderLayer with tanh-approximated gelu"
        if not (layer.norm1.elementwise_affine and layer.norm2.elementwise_affine and layer.norm1.bias is not None
                and layer.norm2.bias is not None):
            return "nn.TransformerEncoderLayer with norms without affine parameters"
    return None


def _attention_refusal(module) -> str | None:
    if not module._qkv_same_embed_dim or module.bias_k is not None or module.add_zero_attn or module.in_proj_bias is None:
        return "nn.MultiheadAttention with separate k/v sizes, key/value biases, zero attention or no bias"
    if module.dropout and module.training:
        return "nn.MultiheadAttention with dropout in training"
    return None
