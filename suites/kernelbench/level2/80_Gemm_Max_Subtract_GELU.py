"""KernelBench L2 80: linear layer, row maximum, minus the row mean, GELU (output: batch x 1)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
in_features = 8192
out_features = 8192
max_dim = 1


class Model(nn.Module):
    def __init__(self, in_features, out_features, max_dim):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x):
        x = self.gemm(x)
        row_max = torch.max(x, dim=self.max_dim, keepdim=True).values
        row_mean = x.mean(dim=self.max_dim, keepdim=True)
        return F.gelu(row_max - row_mean)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, max_dim]


SMALL = {"batch_size": 16, "in_features": 64, "out_features": 64}
FIXES = {
    "input_distribution": "torch.randn instead of torch.rand: signed inputs with spread",
    "degenerate_output": "the mean subtracted is the mean of the linear output over the same axis as the max; "
                         "upstream subtracts the mean of the (batch, 1) max over its size-1 axis, which is the "
                         "max itself, so its output is GELU(0) = 0 identically",
}
EXCLUDE = None
