"""KernelBench L2 34: 3-D transposed conv, LayerNorm, GELU, scale.

The LayerNorm has shape (out_channels,) and, as upstream, normalizes the last axis (width) of the
5-D tensor; the sizes make that axis out_channels long (2 * W == out_channels).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
in_channels = 32
out_channels = 64
D = 16
H = 32
W = 32
kernel_size = 4
stride = 2
padding = 1
bias = True
eps = 1e-5
scaling_factor = 1.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias=True, eps=1e-5,
                 scaling_factor=1.0):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, bias=bias)
        self.layer_norm = nn.LayerNorm(out_channels, eps=eps)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.conv_transpose(x)
        x = self.layer_norm(x)
        x = F.gelu(x)
        return x * self.scaling_factor


def get_inputs():
    return [torch.randn(batch_size, in_channels, D, H, W)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, bias, eps, scaling_factor]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "D": 4, "H": 4, "W": 4}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
