"""KernelBench L2 100: 3-D transposed conv, clamp from below, divide by a constant."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
depth = 24
height = 48
width = 48
kernel_size = 3
stride = 2
padding = 1
min_value = -1.0
divisor = 2.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, min_value, divisor):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding)
        self.min_value = min_value
        self.divisor = divisor

    def forward(self, x):
        x = self.conv_transpose(x)
        x = torch.clamp(x, min=self.min_value)
        return x / self.divisor


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, min_value, divisor]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "depth": 4, "height": 6, "width": 6}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
