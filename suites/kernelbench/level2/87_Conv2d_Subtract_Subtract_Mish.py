"""KernelBench L2 87: 2-D convolution, subtract two constants, Mish."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_channels = 8
out_channels = 64
height = 256
width = 256
kernel_size = 3
subtract_value_1 = 0.5
subtract_value_2 = 0.2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, subtract_value_1, subtract_value_2):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract_value_1 = subtract_value_1
        self.subtract_value_2 = subtract_value_2

    def forward(self, x):
        x = self.conv(x)
        x = x - self.subtract_value_1
        x = x - self.subtract_value_2
        return F.mish(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, subtract_value_1, subtract_value_2]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 16, "width": 16}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
