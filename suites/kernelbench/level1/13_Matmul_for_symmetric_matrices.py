"""KernelBench L1 13: C = A @ B for symmetric N x N matrices A and B."""

import torch
import torch.nn as nn

N = 4096


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(N, N)
    A = (A + A.T) / 2
    B = torch.randn(N, N)
    B = (B + B.T) / 2
    return [A, B]


def get_init_inputs():
    return []


SMALL = {"N": 255}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
