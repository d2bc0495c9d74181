"""KernelBench L2 49: 3-D transposed conv, softmax over channels, sigmoid."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 32
out_channels = 64
D = 16
H = 32
W = 32
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
input_scale = 8.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias=True):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding, bias=bias)
        self.softmax = nn.Softmax(dim=1)
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        x = self.conv_transpose(x)
        x = self.softmax(x)
        return self.sigmoid(x)


def get_inputs():
    # The transposed conv shrinks the spread ~7x; at scale 8 the logits have std ~1, so the softmax
    # over 64 channels is not flat and sigmoid(softmax) is not a constant 0.5 + 1/128.
    return [torch.randn(batch_size, in_channels, D, H, W) * input_scale]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "D": 4, "H": 4, "W": 4}
FIXES = {
    "input_distribution": "torch.randn * 8 instead of torch.rand",
    "degenerate_output": "logits of std ~0.14 made the softmax over 64 channels nearly flat, so the output "
                         "was 0.504 +- 0.001 everywhere and a constant passed at tolerance 1e-2",
}
EXCLUDE = None
