"""KernelBench L2 78: 3-D transposed conv, 2x2x2 max pool, 3x3x3 max pool, sum over channels."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 32
out_channels = 64
depth = 32
height = 32
width = 32
kernel_size = 5
stride = 2
padding = 2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding)
        self.max_pool1 = nn.MaxPool3d(kernel_size=2)
        self.max_pool2 = nn.MaxPool3d(kernel_size=3)

    def forward(self, x):
        x = self.conv_transpose(x)
        x = self.max_pool1(x)
        x = self.max_pool2(x)
        return torch.sum(x, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "depth": 8, "height": 8, "width": 8}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
