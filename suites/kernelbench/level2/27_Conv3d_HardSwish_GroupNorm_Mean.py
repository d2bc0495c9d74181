"""KernelBench L2 27: 3-D convolution, hardswish, group norm, mean over the spatial axes."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
in_channels = 3
out_channels = 16
depth = 16
height = 32
width = 32
kernel_size = 4


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups=4, bias=True):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, bias=bias)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv(x)
        x = F.hardswish(x)
        x = self.group_norm(x)
        return torch.mean(x, dim=[2, 3, 4])


def get_inputs():
    # A per-(sample, channel) offset: the output is a spatial mean, and means of zero-mean noise are
    # nearly equal for every sample, so without it few outputs depend on x beyond tolerance 1e-2.
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x + torch.randn(batch_size, in_channels, 1, 1, 1)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]


SMALL = {"batch_size": 2, "out_channels": 8, "depth": 6, "height": 8, "width": 8}
FIXES = {"input_distribution": "torch.randn plus a per-(sample, channel) torch.randn offset instead of torch.rand: "
                               "signed inputs reach hardswish's negative side, and without offsets a third of the "
                               "spatial means moved beyond 1e-2 between inputs"}
EXCLUDE = None
