"""KernelBench L1 87: pointwise (1x1) Conv2d, 64 -> 128 channels, no bias, on a 1024 x 1024 image."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
width = 1024
height = 1024


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, bias=False):
        super().__init__()
        self.conv1d = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=bias)

    def forward(self, x):
        return self.conv1d(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]


SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "width": 65, "height": 63}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
