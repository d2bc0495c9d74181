"""KernelBench L2 26: 3-D transposed conv, add a second input, then x * hardswish(x).

As upstream, a bias parameter of shape bias_shape is declared but not used by forward (its 5-D
shape would not broadcast as a per-channel bias); it keeps the state_dict that existing
solutions expect.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_channels = 32
out_channels = 64
D = 16
H = 16
W = 16
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
bias_shape = (out_channels, 1, 1, 1, 1)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x, add_input):
        x = self.conv_transpose(x)
        x = x + add_input
        return x * F.hardswish(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, D, H, W),
            torch.randn(batch_size, out_channels, D * stride, H * stride, W * stride)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "D": 4, "H": 4, "W": 4}
FIXES = {"input_distribution": "torch.randn instead of torch.rand for both inputs: hardswish's negative side"}
EXCLUDE = None
