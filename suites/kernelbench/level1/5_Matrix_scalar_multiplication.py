"""KernelBench L1 5: C = A * s for a matrix A and a Python float s."""

import torch
import torch.nn as nn

M = 16384 * 4
N = 4096 * 4


class Model(nn.Module):
    def forward(self, A, s):
        return A * s


def get_inputs():
    A = torch.randn(M, N)
    s = 3.14
    return [A, s]


def get_init_inputs():
    return []


SMALL = {"M": 255, "N": 1023}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
