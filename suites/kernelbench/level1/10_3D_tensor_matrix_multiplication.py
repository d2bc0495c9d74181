"""KernelBench L1 10: C = A @ B for a 3-D tensor A (N, M, K) and a matrix B (K, L)."""

import torch
import torch.nn as nn

N = 16
M = 1024
K = 2048
L = 768


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(N, M, K)
    B = torch.randn(K, L)
    return [A, B]


def get_init_inputs():
    return []


SMALL = {"N": 4, "M": 63, "K": 129, "L": 95}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
