"""KernelBench L3 50: causal multi-head self-attention with ReLU in place of softmax (minGPT-style
fused QKV projection; no output projection is applied)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
max_seqlen = 1024
n_embd = 768
n_head = 12


class Model(nn.Module):
    def __init__(self, n_embd, n_head, max_seqlen):
        super().__init__()
        assert n_embd % n_head == 0, "n_embd must be a multiple of n_head"
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)  # built but unused, as in KernelBench
        causal = torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen)
        self.register_buffer("bias", causal)
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)  # (B, heads, T, head_dim)
        q = q.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
        v = v.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = F.relu(att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf")))
        return (att @ v).transpose(1, 2).contiguous().view(b, t, c)


def get_inputs():
    return [torch.randn(batch_size, max_seqlen, n_embd)]


def get_init_inputs():
    return [n_embd, n_head, max_seqlen]


SMALL = {"batch_size": 2, "max_seqlen": 32, "n_embd": 64, "n_head": 4}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
}
EXCLUDE = None
