"""KernelBench L2 58: 3-D transposed conv, logsumexp over channels, x * sigmoid(x + 3) / 6,
subtract a learned scalar, clamp to [-1, 1]."""

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
bias_shape = (1, 1, 1, 1)
input_scale = 12.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding)
        # Scaled so the clamp to [-1, 1] cuts the tail only: an N(0, 1) scalar below about -0.65
        # (a quarter of all seeds) would push every output to the bound 1.
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.1)

    def forward(self, x):
        x = self.conv_transpose(x)
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = x * torch.sigmoid(x + 3) / 6
        x = x - self.bias
        return torch.clamp(x, min=-1, max=1)


def get_inputs():
    # With 3 input channels the transposed conv has output std ~0.09 per unit of input; at scale 12
    # the logits have std ~1 and the logsumexp over 16 channels varies with x.
    return [torch.randn(batch_size, in_channels, depth, height, width) * input_scale]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, bias_shape]


SMALL = {"batch_size": 2, "out_channels": 8, "depth": 4, "height": 8, "width": 8}
FIXES = {
    "input_distribution": "torch.randn * 12 instead of torch.rand",
    "degenerate_output": "logits of std ~0.09 made the channel logsumexp ~2.78 +- 0.02 everywhere (output std "
                         "0.003); and the bias is drawn as 0.1 * randn so that no seed saturates the clamp",
}
EXCLUDE = None
