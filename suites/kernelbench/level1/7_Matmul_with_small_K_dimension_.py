"""KernelBench L1 7: C = A @ B with a short reduction: A (M, K), B (K, N), K = 64."""

import torch
import torch.nn as nn

M = 16384 * 2
N = 16384 * 2
K = 32 * 2


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []


SMALL = {"M": 1023, "N": 1000}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
