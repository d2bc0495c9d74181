"""KernelBench L1 20: y = x for x >= 0, negative_slope * x otherwise (slope 0.01), elementwise."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 393216


class Model(nn.Module):
    def __init__(self, negative_slope=0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return torch.nn.functional.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


SMALL = {"batch_size": 16, "dim": 16383}
FIXES = {
    "input_distribution": "torch.randn instead of torch.rand: LeakyReLU is the identity on rand's [0, 1)",
}
EXCLUDE = None
