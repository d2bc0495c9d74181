"""KernelBench L2 64: linear layer, row logsumexp, LeakyReLU twice, GELU twice."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
in_features = 8192
out_features = 8192


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)

    def forward(self, x):
        x = self.linear(x)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = F.leaky_relu(x, negative_slope=0.01)
        x = F.leaky_relu(x, negative_slope=0.01)
        x = F.gelu(x)
        return F.gelu(x)


def get_inputs():
    # Each row gets its own scale: the row logsumexp of identically distributed rows is nearly the
    # same number for every row, so without it a constant output passes at tolerance 1e-2.
    row_scale = torch.empty(batch_size, 1).uniform_(0.5, 2.0)
    return [torch.randn(batch_size, in_features) * row_scale]


def get_init_inputs():
    return [in_features, out_features]


SMALL = {"batch_size": 16, "in_features": 64, "out_features": 64}
FIXES = {
    "input_distribution": "torch.randn times a per-row scale drawn from U(0.5, 2) instead of torch.rand",
    "degenerate_output": "the output is one logsumexp per row; over identically distributed rows it is "
                         "almost constant (~9.2), so a constant output passed at tolerance 1e-2",
}
EXCLUDE = None
