"""KernelBench L1 93: prefix sum along dim 1 of x * mask, with a boolean mask of the same shape."""

import torch
import torch.nn as nn

batch_size = 32768
input_shape = (32768,)
dim = 1


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x, mask):
        return torch.cumsum(x * mask, dim=self.dim)


def get_inputs():
    x = torch.randn(batch_size, *input_shape)
    mask = torch.randint(0, 2, x.shape).bool()
    return [x, mask]


def get_init_inputs():
    return [dim]


SMALL = {"batch_size": 16, "input_shape": (4093,)}
FIXES = {
    'integer_inputs': 'the mask is a bool tensor and stays bool (never cast to the float precision)',
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
