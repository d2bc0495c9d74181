"""KernelBench L2 31: 2-D convolution, elementwise minimum with a constant, add a learned bias, scale."""

import torch
import torch.nn as nn

batch_size = 128
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3
constant_value = 0.5
bias_shape = (out_channels, 1, 1)
scaling_factor = 2.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, constant_value, bias_shape, scaling_factor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.constant_value = constant_value
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.conv(x)
        x = torch.minimum(x, torch.tensor(self.constant_value, dtype=x.dtype, device=x.device))
        x = x + self.bias
        return x * self.scaling_factor


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, constant_value, bias_shape, scaling_factor]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 16, "width": 16}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
