"""KernelBench L2 86: linear layer, divide by a constant, GELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
input_size = 8192
output_size = 8192
divisor = 10.0


class Model(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor

    def forward(self, x):
        x = self.linear(x)
        x = x / self.divisor
        return F.gelu(x)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, output_size, divisor]


SMALL = {"batch_size": 16, "input_size": 64, "output_size": 64}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs reach GELU's negative side"}
EXCLUDE = None
