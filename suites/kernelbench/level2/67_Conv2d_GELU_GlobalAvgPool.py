"""KernelBench L2 67: 2-D convolution, GELU, global average pool (output: batch x channels)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_channels = 8
out_channels = 64
height = 256
width = 256
kernel_size = 3


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = F.gelu(x)
        x = F.adaptive_avg_pool2d(x, 1)
        return x.squeeze(-1).squeeze(-1)


def get_inputs():
    # A per-(sample, channel) offset: the output averages over all positions, and averages of
    # zero-mean noise are nearly equal for every sample, so without it x hardly matters.
    x = torch.randn(batch_size, in_channels, height, width)
    return [x + torch.randn(batch_size, in_channels, 1, 1)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 16, "width": 16}
FIXES = {
    "input_distribution": "torch.randn plus a per-(sample, channel) torch.randn offset instead of torch.rand",
    "degenerate_output": "at full size the global average of identically distributed inputs is nearly the same "
                         "for every sample: another input's output passed at tolerance 1e-2",
}
EXCLUDE = None
