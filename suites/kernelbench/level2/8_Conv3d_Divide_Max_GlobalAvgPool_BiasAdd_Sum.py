"""KernelBench L2 8: 3-D conv, divide, 3-D max pool, global average pool, bias, sum over channels."""

import torch
import torch.nn as nn

batch_size = 128
in_channels = 8
out_channels = 16
depth = 16
height = 64
width = 64
kernel_size = (3, 3, 3)
divisor = 2.0
pool_size = (2, 2, 2)
bias_shape = (out_channels, 1, 1, 1)
sum_dim = 1


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, divisor, pool_size, bias_shape, sum_dim):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.divisor = divisor
        self.max_pool = nn.MaxPool3d(pool_size)
        self.global_avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.sum_dim = sum_dim

    def forward(self, x):
        x = self.conv(x)
        x = x / self.divisor
        x = self.max_pool(x)
        x = self.global_avg_pool(x)
        x = x + self.bias
        return torch.sum(x, dim=self.sum_dim)


def get_inputs():
    # A per-(sample, channel) offset: the output averages over all positions, and averages of
    # zero-mean noise are nearly equal for every sample, so without it x hardly matters.
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x + torch.randn(batch_size, in_channels, 1, 1, 1)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, divisor, pool_size, bias_shape, sum_dim]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "depth": 6, "height": 10, "width": 10}
FIXES = {
    "input_distribution": "torch.randn plus a per-(sample, channel) torch.randn offset instead of torch.rand",
    "degenerate_output": "at full size the global average of zero-mean (or identically distributed) inputs is "
                         "nearly the same for every sample: a constant, or another input's output, passed "
                         "at tolerance 1e-2",
}
EXCLUDE = None
