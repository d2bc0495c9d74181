"""KernelBench L1 8: C = A @ B with sizes that are not multiples of any tile: A (M, K), B (K, N)."""

import torch
import torch.nn as nn

M = 8205
K = 2949
N = 5921


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []


SMALL = {"M": 205, "K": 149, "N": 321}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
