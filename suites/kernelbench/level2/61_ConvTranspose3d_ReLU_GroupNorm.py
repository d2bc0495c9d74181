"""KernelBench L2 61: 3-D transposed conv without bias, ReLU, group norm."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
D = 32
H = 32
W = 32
kernel_size = 3
groups = 8
bias = False


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups, bias=False):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, bias=bias)
        self.relu = nn.ReLU()
        self.group_norm = nn.GroupNorm(num_groups=groups, num_channels=out_channels)

    def forward(self, x):
        x = self.conv_transpose(x)
        x = self.relu(x)
        return self.group_norm(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, D, H, W)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups, bias]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 16, "D": 4, "H": 6, "W": 6}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs reach the ReLU's negative side"}
EXCLUDE = None
