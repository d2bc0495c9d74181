"""KernelBench L1 49: max over dim 1 of a (batch_size, dim1, dim2) tensor (values only)."""

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
        return torch.max(x, dim=self.dim)[0]


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [1]


SMALL = {"batch_size": 4, "dim1": 257, "dim2": 255}
FIXES = {
    "input_distribution": "torch.randn instead of torch.rand",
    "degenerate_output": "the max of 4096 rand values is 1 - 2.4e-4 +- 2.4e-4, so a constant passes at 1e-2; with "
                         "randn the maxima spread ~0.3 around 3.5",
}
EXCLUDE = None
