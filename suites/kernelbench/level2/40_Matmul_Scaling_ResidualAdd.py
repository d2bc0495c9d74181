"""KernelBench L2 40: linear layer y, then y * scaling_factor + y (y detached)."""

import torch
import torch.nn as nn

batch_size = 16384
in_features = 4096
out_features = 4096
scaling_factor = 0.5


class Model(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.matmul(x)
        original_x = x.clone().detach()
        x = x * self.scaling_factor
        return x + original_x


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scaling_factor]


SMALL = {"batch_size": 16, "in_features": 64, "out_features": 64}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
