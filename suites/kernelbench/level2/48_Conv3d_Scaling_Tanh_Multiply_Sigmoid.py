"""KernelBench L2 48: 3-D convolution, learned per-channel scale, tanh, learned per-channel multiplier,
sigmoid.

As upstream, the scale is a parameter of shape bias_shape drawn from randn; the scaling_factor
argument is accepted for signature compatibility and does not set it.
"""

import torch
import torch.nn as nn

batch_size = 128
in_channels = 3
out_channels = 16
depth = 16
height = 64
width = 64
kernel_size = 3
scaling_factor = 2
bias_shape = (out_channels, 1, 1, 1)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scaling_factor, bias_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.scaling_factor = nn.Parameter(torch.randn(bias_shape))
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv(x)
        x = x * self.scaling_factor
        x = torch.tanh(x)
        x = x * self.bias
        return torch.sigmoid(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scaling_factor, bias_shape]


SMALL = {"batch_size": 2, "out_channels": 8, "depth": 6, "height": 8, "width": 8}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
