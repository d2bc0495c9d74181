"""KernelBench L2 82: 2-D convolution, tanh, scale, learned per-channel bias, max pool."""

import torch
import torch.nn as nn

batch_size = 128
in_channels = 8
out_channels = 64
height = 256
width = 256
kernel_size = 3
scaling_factor = 2.0
bias_shape = (out_channels, 1, 1)
pool_kernel_size = 4


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scaling_factor, bias_shape, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scaling_factor = scaling_factor
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.max_pool = nn.MaxPool2d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = torch.tanh(x)
        x = x * self.scaling_factor
        x = x + self.bias
        return self.max_pool(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scaling_factor, bias_shape, pool_kernel_size]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 16, "width": 16}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
