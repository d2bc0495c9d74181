"""KernelBench L2 44: transposed conv, multiply by a constant, global average pool twice."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
multiplier = 0.5


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, multiplier):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.multiplier = multiplier

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x * self.multiplier
        x = torch.mean(x, dim=[2, 3], keepdim=True)
        return torch.mean(x, dim=[2, 3], keepdim=True)


def get_inputs():
    # A per-(sample, channel) offset: the output averages over all positions, and averages of
    # zero-mean noise are nearly equal for every sample, so without it x hardly matters.
    x = torch.randn(batch_size, in_channels, height, width)
    return [x + torch.randn(batch_size, in_channels, 1, 1)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, multiplier]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 8, "width": 8}
FIXES = {
    "input_distribution": "torch.randn plus a per-(sample, channel) torch.randn offset instead of torch.rand",
    "degenerate_output": "at full size the global average of identically distributed inputs is nearly the same "
                         "for every sample: the output hardly depended on the input at tolerance 1e-2",
}
EXCLUDE = None
