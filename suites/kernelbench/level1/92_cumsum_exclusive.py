"""KernelBench L1 92: exclusive prefix sum along dim 1: out[i] = sum of x[:i] (out[0] = 0), same shape as x."""

import torch
import torch.nn as nn

batch_size = 32768
input_shape = (32768,)
dim = 1


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        # Prefix sums of all but the last element, shifted right by one behind a zero.
        head = x.narrow(self.dim, 0, x.size(self.dim) - 1)
        shifted = torch.cumsum(head, dim=self.dim)
        zeros = torch.zeros_like(x.select(self.dim, 0).unsqueeze(self.dim))
        return torch.cat([zeros, shifted], dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, *input_shape)]


def get_init_inputs():
    return [dim]


SMALL = {"batch_size": 16, "input_shape": (4093,)}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
