"""KernelBench L2 93: transposed conv, add a constant, elementwise minimum with 0, GELU, scale."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_channels = 64
out_channels = 128
height = 64
width = 64
kernel_size = 4
stride = 2
add_value = 0.5
multiply_value = 2.0
input_scale = 5.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, add_value, multiply_value):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride)
        self.add_value = add_value
        self.multiply_value = multiply_value

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x + self.add_value
        x = torch.minimum(x, torch.tensor(0.0, dtype=x.dtype, device=x.device))
        x = F.gelu(x)
        return x * self.multiply_value


def get_inputs():
    # The transposed conv has output std ~0.2 per unit of input; at scale 5 about a third of the
    # outputs fall below -add_value and survive min(x, 0), instead of under 1%.
    return [torch.randn(batch_size, in_channels, height, width) * input_scale]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, add_value, multiply_value]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 8, "width": 8}
FIXES = {
    "input_distribution": "torch.randn * 5 instead of torch.rand",
    "degenerate_output": "with conv outputs of std ~0.2, x + 0.5 is almost never negative, so min(x, 0) made "
                         "over 99% of the outputs exactly 0",
}
EXCLUDE = None
