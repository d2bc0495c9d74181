"""KernelBench L2 43: 3-D convolution, 2x2x2 max pool, logsumexp over channels, ReLU."""

import torch
import torch.nn as nn

batch_size = 4
in_channels = 32
out_channels = 64
depth = 32
height = 128
width = 128
kernel_size = 3
stride = 1
padding = 1


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.max_pool = nn.MaxPool3d(kernel_size=2, stride=2)

    def forward(self, x):
        x = self.conv(x)
        x = self.max_pool(x)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]


SMALL = {"batch_size": 1, "in_channels": 4, "out_channels": 8, "depth": 4, "height": 8, "width": 8}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
