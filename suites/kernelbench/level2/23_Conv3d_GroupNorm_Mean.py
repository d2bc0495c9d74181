"""KernelBench L2 23: 3-D convolution, group norm, mean over the spatial axes (output: batch x channels)."""

import torch
import torch.nn as nn

batch_size = 128
in_channels = 3
out_channels = 24
D = 24
H = 32
W = 32
kernel_size = 3
num_groups = 8


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, num_groups):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.group_norm = nn.GroupNorm(num_groups, out_channels)

    def forward(self, x):
        x = self.conv(x)
        x = self.group_norm(x)
        return x.mean(dim=[2, 3, 4])


def get_inputs():
    # A per-(sample, channel) offset: the output is a spatial mean, and means of zero-mean noise are
    # nearly equal for every sample, so without it few outputs depend on x beyond tolerance 1e-2.
    x = torch.randn(batch_size, in_channels, D, H, W)
    return [x + torch.randn(batch_size, in_channels, 1, 1, 1)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups]


SMALL = {"batch_size": 2, "out_channels": 16, "D": 6, "H": 8, "W": 8}
FIXES = {
    "input_distribution": "torch.randn plus a per-(sample, channel) torch.randn offset instead of torch.rand: "
                          "without offsets only ~7% of the outputs moved beyond 1e-2 between inputs",
    "degenerate_output": "the mean is over the spatial axes (as in L2 27), not over channels and space: group "
                         "norm leaves every group with mean 0, so upstream's all-axes mean is identically ~0",
}
EXCLUDE = None
