"""KernelBench L2 35: 2-D convolution, subtract a constant, hardswish, max pool, Mish."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3
subtract_value = 0.5
pool_kernel_size = 2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, subtract_value, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract_value = subtract_value
        self.pool = nn.MaxPool2d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = x - self.subtract_value
        x = F.hardswish(x)
        x = self.pool(x)
        return F.mish(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, subtract_value, pool_kernel_size]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 16, "width": 16}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
