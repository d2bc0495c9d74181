"""KernelBench L1 48: mean over dim 1 of a (batch_size, dim1, dim2) tensor."""

import torch
import torch.nn as nn

batch_size = 128
dim1 = 4096
dim2 = 4095


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.mean(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [1]


SMALL = {"batch_size": 4, "dim1": 257, "dim2": 255}
FIXES = {
    "input_distribution": "torch.randn instead of torch.rand",
    "degenerate_output": "the mean of 4096 rand values is 0.5 +- 0.0045, so a constant 0.5 passes at 1e-2; with "
                         "randn the means spread +-0.016 around 0",
}
EXCLUDE = None
