"""KernelBench L1 74: ConvTranspose1d, kernel 5, stride 1, no padding, dilation 3, no bias, on sequences of 131072.
"""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 32
out_channels = 64
kernel_size = 5
length = 131072
stride = 1
padding = 0
dilation = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, bias=False):
        super().__init__()
        self.conv1d_transpose = nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, dilation=dilation, bias=bias)

    def forward(self, x):
        return self.conv1d_transpose(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]


SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "length": 1021}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
