"""KernelBench L1 44: AvgPool1d, kernel 8, stride 1, padding 4 (zero padding counted), over (N, C, L)."""

import torch
import torch.nn as nn

batch_size = 64
in_channels = 128
input_length = 65536

kernel_size = 8
stride = 1
padding = 4


class Model(nn.Module):
    def __init__(self, kernel_size, stride=1, padding=0):
        super().__init__()
        self.avg_pool = nn.AvgPool1d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.avg_pool(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, input_length)]


def get_init_inputs():
    return [kernel_size, stride, padding]


SMALL = {"batch_size": 4, "in_channels": 8, "input_length": 4093}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
