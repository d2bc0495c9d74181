"""KernelBench L2 90: 3-D convolution, LeakyReLU, add a learned per-channel tensor, clamp, GELU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_channels = 8
out_channels = 64
depth = 16
height = 64
width = 64
kernel_size = 3
sum_tensor_shape = (out_channels, 1, 1, 1)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, sum_tensor_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.sum_tensor = nn.Parameter(torch.randn(sum_tensor_shape))

    def forward(self, x):
        x = self.conv(x)
        x = F.leaky_relu(x, negative_slope=0.2)
        x = x + self.sum_tensor
        x = torch.clamp(x, min=-1.0, max=1.0)
        return F.gelu(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, sum_tensor_shape]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "depth": 6, "height": 8, "width": 8}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
