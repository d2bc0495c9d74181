"""KernelBench L1 53: min over dim 1 of a (batch_size, dim1, dim2) tensor (values only)."""

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
        return torch.min(x, dim=self.dim)[0]


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [1]


SMALL = {"batch_size": 4, "dim1": 257, "dim2": 255}
FIXES = {
    "input_distribution": "torch.randn instead of torch.rand",
    "degenerate_output": "the min of 4096 rand values is ~2.4e-4, so all-zeros pass at 1e-2 (and nearly at 1e-4); "
                         "with randn the minima spread ~0.3 around -3.5",
}
EXCLUDE = None
