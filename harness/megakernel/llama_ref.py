"""The eager PyTorch Llama the reference VM must match: same config, same random weights.

Full-sequence forward without a KV cache (causal scaled-dot-product attention over every position),
so it shares no code path with the VM's decode-step instructions.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from harness.megakernel.configs import ModelConfig


def init_weights(model: ModelConfig, seed: int = 0, device: str = "cpu") -> dict[str, torch.Tensor]:
    """Random fp32 weights named like the lowering's buffer sources (``layers.0.wq.weight`` ...),
    made on ``device`` (a 1B-class model's 6 GB in fp32 take long to make on the host)."""
    g = torch.Generator(device=device).manual_seed(seed)

    def dense(n_out: int, n_in: int) -> torch.Tensor:
        return torch.randn(n_out, n_in, generator=g, device=device) / math.sqrt(n_in)

    def norm() -> torch.Tensor:
        return 1.0 + 0.1 * torch.randn(model.hidden, generator=g, device=device)

    m = model
    weights = {"embed.weight": torch.randn(m.vocab, m.hidden, generator=g, device=device)}
    for i in range(m.layers):
        p = f"layers.{i}."
        weights.update({p + "attn_norm.weight": norm(), p + "wq.weight": dense(m.q_dim, m.hidden),
                        p + "wk.weight": dense(m.kv_dim, m.hidden), p + "wv.weight": dense(m.kv_dim, m.hidden),
                        p + "wo.weight": dense(m.hidden, m.q_dim), p + "mlp_norm.weight": norm(),
                        p + "w_gate.weight": dense(m.intermediate, m.hidden),
                        p + "w_up.weight": dense(m.intermediate, m.hidden),
                        p + "w_down.weight": dense(m.hidden, m.intermediate)})
    weights["norm.weight"] = norm()
    weights["lm_head.weight"] = dense(m.vocab, m.hidden)
    return weights


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rotary(x: torch.Tensor, positions: torch.Tensor, theta: float) -> torch.Tensor:
    """Rotate-half RoPE. x: [S, heads, head_dim]."""
    dim = x.shape[-1]
    inv_freq = 1.0 / theta ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim)
    angles = positions.float()[:, None] * inv_freq[None, :]
    cos, sin = torch.cat([angles, angles], -1).cos()[:, None, :], torch.cat([angles, angles], -1).sin()[:, None, :]
    half = dim // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], -1)
    return x * cos + rotated * sin


class EagerLlama(torch.nn.Module):
    def __init__(self, model: ModelConfig, weights: dict[str, torch.Tensor]):
        super().__init__()
        self.m, self.w = model, weights

    @torch.no_grad()
    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens: [S] int64 -> logits [S, vocab]."""
        m, w = self.m, self.w
        x = w["embed.weight"][tokens]
        positions = torch.arange(tokens.shape[0])
        for i in range(m.layers):
            x = self._block(x, positions, f"layers.{i}.")
        return rms_norm(x, w["norm.weight"], m.rms_eps) @ w["lm_head.weight"].T

    def _block(self, x: torch.Tensor, positions: torch.Tensor, p: str) -> torch.Tensor:
        m, w, seq = self.m, self.w, x.shape[0]
        h = rms_norm(x, w[p + "attn_norm.weight"], m.rms_eps)
        q = rotary((h @ w[p + "wq.weight"].T).view(seq, m.heads, m.head_dim), positions, m.rope_theta)
        k = rotary((h @ w[p + "wk.weight"].T).view(seq, m.kv_heads, m.head_dim), positions, m.rope_theta)
        v = (h @ w[p + "wv.weight"].T).view(seq, m.kv_heads, m.head_dim)
        group = m.heads // m.kv_heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        attn = F.scaled_dot_product_attention(q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1),
                                              is_causal=True)
        x = x + attn.transpose(0, 1).reshape(seq, m.q_dim) @ w[p + "wo.weight"].T
        h = rms_norm(x, w[p + "mlp_norm.weight"], m.rms_eps)
        mlp = F.silu(h @ w[p + "w_gate.weight"].T) * (h @ w[p + "w_up.weight"].T)
        return x + mlp @ w[p + "w_down.weight"].T
