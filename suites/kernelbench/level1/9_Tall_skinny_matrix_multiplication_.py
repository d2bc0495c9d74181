"""KernelBench L1 9: C = A @ B with A (M, N) tall and skinny and B (N, M): an M x M outer-product-like result."""

import torch
import torch.nn as nn

M = 16384 * 2
N = 16 * 2


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(M, N)
    B = torch.randn(N, M)
    return [A, B]


def get_init_inputs():
    return []


SMALL = {"M": 1000}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
