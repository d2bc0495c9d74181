"""KernelBench L2 42: transposed conv, global average pool, learned bias, logsumexp over channels,
sum over the (size-1) spatial axes, multiply by 10."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
height = 512
width = 512
kernel_size = 3
bias_shape = (out_channels, 1, 1)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv_transpose(x)
        x = torch.mean(x, dim=(2, 3), keepdim=True)
        x = x + self.bias
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = torch.sum(x, dim=(2, 3))
        return x * 10.0


def get_inputs():
    # A per-(sample, channel) offset: the output averages over all positions, and averages of
    # zero-mean noise are nearly equal for every sample, so without it x hardly matters. The
    # offsets are wide (std 4) because 10 * logsumexp is ~60, which makes rtol 1e-2 loose.
    x = torch.randn(batch_size, in_channels, height, width)
    return [x + 4.0 * torch.randn(batch_size, in_channels, 1, 1)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 16, "width": 16}
FIXES = {
    "input_distribution": "torch.randn plus a per-(sample, channel) 4 * torch.randn offset instead of torch.rand",
    "degenerate_output": "at full size the global average of identically distributed inputs is nearly the same "
                         "for every sample: a constant output passed at tolerance 1e-2",
}
EXCLUDE = None
