"""Baselines for the megakernel: an eager PyTorch decode step with a static KV cache, and its CUDA graph.

``EagerDecode(model, weights, device).step(token, pos)`` computes one position as a framework would
(one kernel per op; the cache is written at ``pos`` and attention reads rows ``0..pos``). Its numerics
are checked against ``llama_ref.EagerLlama`` in the tests, so it is the same model. ``graphed(pos)``
captures one step at a fixed position in a CUDA graph: the eager step without its launch overhead.
"""

from __future__ import annotations

from harness.megakernel.configs import ModelConfig


class EagerDecode:
    def __init__(self, model: ModelConfig, weights: dict, device: str = "cuda"):
        import torch

        self.torch, self.m, self.w, self.device = torch, model, weights, torch.device(device)
        m = model
        shape = (m.max_seq, m.kv_heads, m.head_dim)
        self.k_cache = [torch.zeros(shape, device=self.device) for _ in range(m.layers)]
        self.v_cache = [torch.zeros(shape, device=self.device) for _ in range(m.layers)]
        half = torch.arange(0, m.head_dim, 2, dtype=torch.float32, device=self.device) / m.head_dim
        angles = torch.arange(m.max_seq, device=self.device, dtype=torch.float32)[:, None] / m.rope_theta ** half
        angles = torch.cat([angles, angles], -1)
        self.cos, self.sin = angles.cos(), angles.sin()

    def reset(self) -> None:
        for cache in self.k_cache + self.v_cache:
            cache.zero_()

    def step(self, token, pos: int):
        """token: a [1] int64 tensor on the device -> logits [vocab]."""
        torch, m, w = self.torch, self.m, self.w
        with torch.no_grad():
            x = w["embed.weight"][token]
            for i in range(m.layers):
                x = self._layer(x, pos, i, f"layers.{i}.")
            return (self._norm(x, w["norm.weight"]) @ w["lm_head.weight"].T)[0]

    def _norm(self, x, weight):
        return x * self.torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.m.rms_eps) * weight

    def _rope(self, x, pos: int):
        half = self.m.head_dim // 2
        rotated = self.torch.cat([-x[..., half:], x[..., :half]], -1)
        return x * self.cos[pos] + rotated * self.sin[pos]

    def _layer(self, x, pos: int, i: int, p: str):
        torch, m, w = self.torch, self.m, self.w
        h = self._norm(x, w[p + "attn_norm.weight"])
        q = self._rope((h @ w[p + "wq.weight"].T).view(m.heads, m.head_dim), pos)
        self.k_cache[i][pos] = self._rope((h @ w[p + "wk.weight"].T).view(m.kv_heads, m.head_dim), pos)
        self.v_cache[i][pos] = (h @ w[p + "wv.weight"].T).view(m.kv_heads, m.head_dim)
        group = m.heads // m.kv_heads
        keys = self.k_cache[i][:pos + 1].repeat_interleave(group, dim=1).transpose(0, 1)
        values = self.v_cache[i][:pos + 1].repeat_interleave(group, dim=1).transpose(0, 1)
        attn = torch.nn.functional.scaled_dot_product_attention(q[:, None, :], keys, values)
        x = x + attn.reshape(1, m.q_dim) @ w[p + "wo.weight"].T
        h = self._norm(x, w[p + "mlp_norm.weight"])
        mlp = torch.nn.functional.silu(h @ w[p + "w_gate.weight"].T) * (h @ w[p + "w_up.weight"].T)
        return x + mlp @ w[p + "w_down.weight"].T

    def graphed(self, token, pos: int):
        """(replay, logits): a CUDA graph of one step at ``pos`` reading ``token`` in place; ``logits``
        is the graph's output tensor, rewritten by each replay."""
        from harness.megakernel.executor_timing import graphed

        out = {}

        def call():
            out["logits"] = self.step(token, pos)

        replay = graphed(call, str(self.device))
        return replay, out["logits"]
