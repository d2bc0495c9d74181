"""KernelBench L1 11: C = einsum("bijl,lk->bijk", A, B): a 4-D tensor contracted with a matrix on its last axis."""

import torch
import torch.nn as nn

b = 8
i = 256
j = 512
l = 256
k = 768


class Model(nn.Module):
    def forward(self, A, B):
        return torch.einsum("bijl,lk->bijk", A, B)


def get_inputs():
    A = torch.randn(b, i, j, l)
    B = torch.randn(l, k)
    return [A, B]


def get_init_inputs():
    return []


SMALL = {"b": 2, "i": 15, "j": 33, "l": 63, "k": 95}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
