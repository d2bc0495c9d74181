"""KernelBench L2 36: transposed conv, minimum over channels, sum over height, GELU, add a learned bias."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
in_channels = 64
out_channels = 128
height = 128
width = 128
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
bias_shape = (1, 1, 1)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride, padding,
                                                 output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        x = self.conv_transpose(x)
        x = torch.min(x, dim=1, keepdim=True)[0]
        x = torch.sum(x, dim=2, keepdim=True)
        x = F.gelu(x)
        return x + self.bias


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 8, "width": 8}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = ("degenerate by construction: the sum over 256 rows of the minimum over 128 channels is far below "
           "zero (about -190 at full size) for any input distribution, so GELU returns ~0 and the output is the "
           "bias everywhere; a constant passes at both tolerances. No input distribution or scale that keeps the "
           "operators and sizes brings the sum into GELU's range.")
