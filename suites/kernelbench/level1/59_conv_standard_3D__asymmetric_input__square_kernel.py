"""KernelBench L1 59: Conv3d with kernel (3, 3, 1), stride 1, no padding, no bias, on a 256 x 256 x 10 volume."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 3
out_channels = 64
kernel_size = 3
width = 256
height = 256
depth = 10


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=False):
        super().__init__()
        self.conv3d = nn.Conv3d(in_channels, out_channels, (kernel_size, kernel_size, 1), stride=stride,
                                padding=padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x):
        return self.conv3d(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width, depth)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


SMALL = {"batch_size": 2, "out_channels": 16, "width": 33, "height": 31, "depth": 10}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
