"""KernelBench L2 91: transposed conv, softmax over channels, learned per-channel bias, scale, sigmoid."""

import torch
import torch.nn as nn

batch_size = 128
in_channels = 64
out_channels = 128
height = 64
width = 64
kernel_size = 4
stride = 2
padding = 1
output_padding = 1
bias_shape = (out_channels, 1, 1)
scaling_factor = 2.0
input_scale = 10.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape,
                 scaling_factor):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.conv_transpose(x)
        x = torch.softmax(x, dim=1)
        x = x + self.bias
        x = x * self.scaling_factor
        return torch.sigmoid(x)


def get_inputs():
    # The transposed conv has output std ~0.2 per unit of input; at scale 10 the softmax over 128
    # channels is peaked and moves the output, instead of adding ~1/128 to the bias everywhere.
    return [torch.randn(batch_size, in_channels, height, width) * input_scale]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape, scaling_factor]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "height": 8, "width": 8}
FIXES = {
    "input_distribution": "torch.randn * 10 instead of torch.rand",
    "degenerate_output": "with logits of std ~0.2 the softmax over 128 channels is ~1/128 everywhere and the "
                         "output is sigmoid(2 * bias) up to ~1e-3, whatever the input",
}
EXCLUDE = None
