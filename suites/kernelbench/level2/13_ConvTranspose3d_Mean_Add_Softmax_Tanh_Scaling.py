"""KernelBench L2 13: 3-D transposed conv, mean over depth, per-channel bias, softmax over channels,
tanh, scale."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 16
out_channels = 64
depth = 32
height = 128
width = 128
kernel_size = 3
stride = 1
padding = 1
scaling_factor = 2.0
input_scale = 8.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, scaling_factor):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding)
        self.bias = nn.Parameter(torch.randn(1, out_channels, 1, 1, 1))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x.mean(dim=2, keepdim=True)
        x = x + self.bias
        x = torch.softmax(x, dim=1)
        x = torch.tanh(x)
        return x * self.scaling_factor


def get_inputs():
    # The mean over 32 depth slices leaves logit changes of ~0.05 per unit of input against a bias of
    # std 1; at scale 8 the softmax over channels follows x, not just the bias.
    return [torch.randn(batch_size, in_channels, depth, height, width) * input_scale]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, scaling_factor]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "depth": 4, "height": 8, "width": 8}
FIXES = {
    "input_distribution": "torch.randn * 8 instead of torch.rand",
    "degenerate_output": "at full size only ~2% of the outputs changed beyond tolerance 1e-2 between inputs: "
                         "the softmax over channels was set by the bias; at scale 8 about a third do",
}
EXCLUDE = None
