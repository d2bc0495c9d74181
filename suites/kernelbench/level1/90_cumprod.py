"""KernelBench L1 90: inclusive prefix product along dim 1 of a (batch_size, 32768) tensor of factors near 1."""

import torch
import torch.nn as nn

batch_size = 32768
input_shape = (32768,)
dim = 1
factor_spread = 0.01


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumprod(x, dim=self.dim)


def get_inputs():
    # Factors 1 + 0.01 * randn: the running log-product is a random walk (std ~1.8 after 32768
    # steps), so every position of the output carries a value.
    return [1 + factor_spread * torch.randn(batch_size, *input_shape)]


def get_init_inputs():
    return [dim]


SMALL = {"batch_size": 16, "input_shape": (4093,)}
FIXES = {
    "input_distribution": "1 + 0.01 * torch.randn instead of torch.rand",
    "degenerate_output": "a running product of rand factors (mean log -1) underflows to exactly 0 after about 100 "
                         "of 32768 steps, so a kernel that stops early passes; factors near 1 keep the product "
                         "between ~1e-2 and ~1e2 along the whole row",
}
EXCLUDE = None
