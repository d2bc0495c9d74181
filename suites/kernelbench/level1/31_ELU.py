"""KernelBench L1 31: y = x for x > 0, alpha * (exp(x) - 1) otherwise (alpha from the constructor), elementwise."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 393216


class Model(nn.Module):
    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return torch.nn.functional.elu(x, alpha=self.alpha)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [1.0]


SMALL = {"batch_size": 16, "dim": 16383}
FIXES = {
    "input_distribution": "torch.randn instead of torch.rand: ELU is the identity on rand's [0, 1)",
}
EXCLUDE = None
