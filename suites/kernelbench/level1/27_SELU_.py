"""KernelBench L1 27: y = selu(x) elementwise (scaled ELU with the self-normalising constants)."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 393216


class Model(nn.Module):
    def forward(self, x):
        return torch.selu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


SMALL = {"batch_size": 16, "dim": 16383}
FIXES = {
    "input_distribution": "torch.randn instead of torch.rand: on [0, 1) SELU is the affine map 1.0507 * x and its "
                          "exponential branch is never taken",
}
EXCLUDE = None
