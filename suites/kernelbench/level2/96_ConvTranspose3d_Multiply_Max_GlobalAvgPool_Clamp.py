"""KernelBench L2 96: 3-D transposed conv, scale, max pool, global average pool, clamp to [0, 1]."""

import torch
import torch.nn as nn

batch_size = 128
in_channels = 3
out_channels = 16
depth = 16
height = 32
width = 32
kernel_size = 3
stride = 2
padding = 1
scale = 0.5
maxpool_kernel_size = 2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, scale, maxpool_kernel_size):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding)
        self.scale = scale
        self.maxpool = nn.MaxPool3d(kernel_size=maxpool_kernel_size)
        self.global_avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.clamp_min = 0
        self.clamp_max = 1

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x * self.scale
        x = self.maxpool(x)
        x = self.global_avg_pool(x)
        return torch.clamp(x, min=self.clamp_min, max=self.clamp_max)


def get_inputs():
    # A per-(sample, channel) offset: the output averages over all positions, and averages of
    # zero-mean noise are nearly equal for every sample, so without it x hardly matters.
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x + torch.randn(batch_size, in_channels, 1, 1, 1)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, scale, maxpool_kernel_size]


SMALL = {"batch_size": 2, "out_channels": 8, "depth": 4, "height": 8, "width": 8}
FIXES = {
    "input_distribution": "torch.randn plus a per-(sample, channel) torch.randn offset instead of torch.rand",
    "degenerate_output": "at full size the global average of identically distributed inputs is nearly the same "
                         "for every sample: another input's output passed at tolerance 1e-2",
}
EXCLUDE = None
