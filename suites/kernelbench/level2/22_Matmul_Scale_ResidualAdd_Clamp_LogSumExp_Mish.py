"""KernelBench L2 22: linear layer, scale, add to itself, clamp, row logsumexp, then x * mish(x)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
input_size = 8192
hidden_size = 8192
scale_factor = 2.0
clamp_min = -10.0
clamp_max = 10.0


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, scale_factor, clamp_min, clamp_max):
        super().__init__()
        self.matmul = nn.Linear(input_size, hidden_size)
        self.scale_factor = scale_factor
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x):
        x = self.matmul(x)
        x = x * self.scale_factor
        x = x + x
        x = torch.clamp(x, self.clamp_min, self.clamp_max)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return x * F.mish(x)


def get_inputs():
    # Each row gets its own scale: the row logsumexp of identically distributed rows is nearly the
    # same number for every row, so without it a constant output passes at tolerance 1e-2.
    row_scale = torch.empty(batch_size, 1).uniform_(0.5, 2.0)
    return [torch.randn(batch_size, input_size) * row_scale]


def get_init_inputs():
    return [input_size, hidden_size, scale_factor, clamp_min, clamp_max]


SMALL = {"batch_size": 16, "input_size": 64, "hidden_size": 64}
FIXES = {
    "input_distribution": "torch.randn times a per-row scale drawn from U(0.5, 2) instead of torch.rand",
    "degenerate_output": "the output is one logsumexp per row; over identically distributed rows it is "
                         "almost constant, so a constant output passed at tolerance 1e-2",
}
EXCLUDE = None
