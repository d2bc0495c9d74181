"""KernelBench L1 76: Conv1d, kernel 3, stride 3, dilation 4, no padding, no bias, on sequences of 524280."""

import torch
import torch.nn as nn

batch_size = 64
in_channels = 64
out_channels = 128
kernel_size = 3
length = 524280
stride = 3
dilation = 4


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, dilation=1, bias=False):
        super().__init__()
        self.conv1d = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride, dilation=dilation,
                                bias=bias)

    def forward(self, x):
        return self.conv1d(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, dilation]


SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "length": 4093}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
