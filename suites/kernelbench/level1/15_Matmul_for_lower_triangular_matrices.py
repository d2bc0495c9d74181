"""KernelBench L1 15: C = tril(A @ B) for lower-triangular M x M matrices A and B."""

import torch
import torch.nn as nn

M = 4096


class Model(nn.Module):
    def forward(self, A, B):
        return torch.tril(torch.matmul(A, B))


def get_inputs():
    A = torch.tril(torch.randn(M, M))
    B = torch.tril(torch.randn(M, M))
    return [A, B]


def get_init_inputs():
    return []


SMALL = {"M": 255}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
