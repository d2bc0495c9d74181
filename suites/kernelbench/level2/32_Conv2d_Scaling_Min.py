"""KernelBench L2 32: 2-D convolution, scale, minimum over channels."""

import torch
import torch.nn as nn

batch_size = 64
in_channels = 64
out_channels = 128
height = 256
width = 256
kernel_size = 3
scale_factor = 2.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scale_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor

    def forward(self, x):
        x = self.conv(x)
        x = x * self.scale_factor
        return torch.min(x, dim=1, keepdim=True)[0]


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale_factor]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 16, "width": 16}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
