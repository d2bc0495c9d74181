"""KernelBench L1 4: y = A @ B with A (M, K) and B a (K, 1) column vector."""

import torch
import torch.nn as nn

M = 256 * 8
K = 131072 * 8


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, 1)
    return [A, B]


def get_init_inputs():
    return []


SMALL = {"M": 127, "K": 8191}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
