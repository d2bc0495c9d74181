"""KernelBench L2 3: 3-D transposed conv, add a learned scalar, LayerNorm, 3-D average pool, GELU.

The LayerNorm has shape (out_channels,) and, as upstream, normalizes the last axis (width) of the
5-D tensor; the sizes make that axis out_channels long (2 * width == out_channels).
"""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 32
out_channels = 64
depth = 16
height = 32
width = 32
kernel_size = (3, 3, 3)
stride = (2, 2, 2)
padding = (1, 1, 1)
output_padding = (1, 1, 1)
sum_weight = 1.0
norm_shape = (out_channels,)
pool_kernel_size = (2, 2, 2)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, sum_weight,
                 norm_shape, pool_kernel_size):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.sum_weight = nn.Parameter(torch.tensor(sum_weight))
        self.norm = nn.LayerNorm(norm_shape)
        self.avg_pool = nn.AvgPool3d(kernel_size=pool_kernel_size)
        self.gelu = nn.GELU()

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x + self.sum_weight
        x = self.norm(x)
        x = self.avg_pool(x)
        return self.gelu(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, sum_weight, norm_shape,
            pool_kernel_size]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "depth": 4, "height": 4, "width": 4}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
