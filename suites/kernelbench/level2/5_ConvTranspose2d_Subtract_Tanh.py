"""KernelBench L2 5: 2-D transposed conv (stride 2), subtract a learned per-channel bias, tanh."""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 64
out_channels = 64
height = 256
width = 256
kernel_size = 4
bias_shape = (out_channels, 1, 1)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape, stride=2, padding=1, output_padding=1):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x - self.bias
        return torch.tanh(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 8, "width": 8}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
