"""KernelBench L2 55: linear layer, 1-D max pool over features, sum over features, scale."""

import torch
import torch.nn as nn

batch_size = 128
in_features = 32768
out_features = 32768
kernel_size = 2
scale_factor = 0.5


class Model(nn.Module):
    def __init__(self, in_features, out_features, kernel_size, scale_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.max_pool = nn.MaxPool1d(kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.matmul(x)
        x = self.max_pool(x.unsqueeze(1)).squeeze(1)
        x = torch.sum(x, dim=1)
        return x * self.scale_factor


def get_inputs():
    # Each row gets its own scale: a sum over 16384 pooled values of identically distributed rows
    # is nearly the same for every row, so without it a constant output passes at tolerance 1e-2.
    row_scale = torch.empty(batch_size, 1).uniform_(0.5, 2.0)
    return [torch.randn(batch_size, in_features) * row_scale]


def get_init_inputs():
    return [in_features, out_features, kernel_size, scale_factor]


SMALL = {"batch_size": 16, "in_features": 64, "out_features": 64}
FIXES = {
    "input_distribution": "torch.randn times a per-row scale drawn from U(0.5, 2) instead of torch.rand",
    "degenerate_output": "the output is one sum of 16384 pooled maxima per row; over identically distributed rows "
                         "it varies by about 1%, so a constant output passed at tolerance 1e-2",
}
EXCLUDE = None
