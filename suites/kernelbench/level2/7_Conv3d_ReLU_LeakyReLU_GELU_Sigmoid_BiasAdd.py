"""KernelBench L2 7: 3-D convolution, ReLU, LeakyReLU, GELU, sigmoid, then a learned per-channel bias."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
in_channels = 8
out_channels = 32
depth = 32
height = 64
width = 64
kernel_size = 3
bias_shape = (out_channels, 1, 1, 1)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv(x)
        x = torch.relu(x)
        x = F.leaky_relu(x, negative_slope=0.01)
        x = F.gelu(x)
        x = torch.sigmoid(x)
        return x + self.bias


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "depth": 6, "height": 10, "width": 10}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs reach the ReLU's negative side"}
EXCLUDE = None
