"""KernelBench L1 6: C = A @ B with a very long reduction: A (M, K), B (K, N), K >> M, N."""

import torch
import torch.nn as nn

M = 256
N = 256
K = 131072 * 4


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []


SMALL = {"M": 33, "N": 65, "K": 16383}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
