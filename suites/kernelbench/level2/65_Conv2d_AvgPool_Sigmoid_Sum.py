"""KernelBench L2 65: 2-D convolution, average pool, sigmoid, sum over channels and space."""

import torch
import torch.nn as nn

batch_size = 128
in_channels = 8
out_channels = 64
height = 384
width = 384
kernel_size = 3
pool_kernel_size = 4


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.avg_pool = nn.AvgPool2d(pool_kernel_size)

    def forward(self, x):
        x = self.conv(x)
        x = self.avg_pool(x)
        x = torch.sigmoid(x)
        return torch.sum(x, dim=[1, 2, 3])


def get_inputs():
    # A per-(sample, channel) offset shifts whole channels of logits together; without it the sum
    # of ~580k sigmoids is the same for every sample to ~0.1% and a constant passes at 1e-2.
    x = torch.randn(batch_size, in_channels, height, width)
    return [x + torch.randn(batch_size, in_channels, 1, 1)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, pool_kernel_size]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 16, "width": 16}
FIXES = {
    "input_distribution": "torch.randn plus a per-(sample, channel) torch.randn offset instead of torch.rand",
    "degenerate_output": "one sum of ~580k sigmoids per sample is nearly the same for identically distributed "
                         "samples, so a constant output passed at tolerance 1e-2",
}
EXCLUDE = None
