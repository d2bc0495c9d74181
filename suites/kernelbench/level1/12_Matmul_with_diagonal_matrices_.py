"""KernelBench L1 12: C = diag(A) @ B, computed as A[:, None] * B (each row of B scaled by one entry of A)."""

import torch
import torch.nn as nn

M = 4096
N = 4096


class Model(nn.Module):
    def forward(self, A, B):
        return A.unsqueeze(1) * B


def get_inputs():
    A = torch.randn(N)
    B = torch.randn(N, M)
    return [A, B]


def get_init_inputs():
    return []


SMALL = {"M": 513, "N": 257}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
