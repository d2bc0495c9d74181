"""KernelBench L2 89: 3-D transposed conv, max pool, softmax over channels, subtract a learned
per-channel vector, swish, maximum over channels."""

import torch
import torch.nn as nn

batch_size = 128
in_channels = 3
out_channels = 16
depth = 16
height = 32
width = 32
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
pool_kernel_size = 2
pool_stride = 2
pool_padding = 0
input_scale = 12.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, pool_kernel_size,
                 pool_stride, pool_padding):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.max_pool = nn.MaxPool3d(kernel_size=pool_kernel_size, stride=pool_stride, padding=pool_padding)
        self.subtract = nn.Parameter(torch.randn(out_channels))

    def forward(self, x):
        x = self.conv_transpose(x)
        x = self.max_pool(x)
        x = torch.softmax(x, dim=1)
        x = x - self.subtract.view(1, -1, 1, 1, 1)
        x = torch.sigmoid(x) * x
        return torch.max(x, dim=1)[0]


def get_inputs():
    # With 3 input channels the transposed conv has output std ~0.09 per unit of input; at scale 12
    # the softmax over 16 channels is not flat and the output follows x, not just the subtract vector.
    return [torch.randn(batch_size, in_channels, depth, height, width) * input_scale]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, pool_kernel_size,
            pool_stride, pool_padding]


SMALL = {"batch_size": 2, "out_channels": 8, "depth": 4, "height": 8, "width": 8}
FIXES = {
    "input_distribution": "torch.randn * 12 instead of torch.rand",
    "degenerate_output": "logits of std ~0.09 made the channel softmax ~1/16 everywhere, so the output was "
                         "set by the subtract vector (std 0.004 across positions) rather than by x",
}
EXCLUDE = None
