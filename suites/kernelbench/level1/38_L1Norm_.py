"""KernelBench L1 38: x divided by the mean absolute value of its row: x / mean(|x|, dim=1)."""

import torch
import torch.nn as nn

batch_size = 32768
dim = 65535


class Model(nn.Module):
    def forward(self, x):
        return x / torch.mean(torch.abs(x), dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


SMALL = {"batch_size": 16, "dim": 8191}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
