"""KernelBench L2 38: 3-D average pool, 3-D transposed conv, clamp to [0, 1], softmax over all
spatial positions of each channel (rescaled by their count), learned per-channel scale."""

import torch
import torch.nn as nn

batch_size = 32
in_channels = 32
out_channels = 64
depth = 32
height = 64
width = 64
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
pool_kernel_size = 2
clamp_min = 0.0
clamp_max = 1.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, pool_kernel_size,
                 clamp_min, clamp_max):
        super().__init__()
        self.avg_pool = nn.AvgPool3d(pool_kernel_size)
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max
        self.scale = nn.Parameter(torch.ones(1, out_channels, 1, 1, 1))

    def forward(self, x):
        x = self.avg_pool(x)
        x = self.conv_transpose(x)
        x = torch.clamp(x, self.clamp_min, self.clamp_max)
        b, c, d, h, w = x.shape
        x = x.view(b, c, -1)
        # Logits in [0, 1] over d*h*w positions give probabilities of about 1/(d*h*w); multiplying
        # by the count keeps the output near 1 instead of near 1e-5.
        x = torch.softmax(x, dim=2) * (d * h * w)
        x = x.view(b, c, d, h, w)
        return x * self.scale


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, pool_kernel_size, clamp_min,
            clamp_max]


SMALL = {"batch_size": 2, "in_channels": 4, "out_channels": 8, "depth": 4, "height": 8, "width": 8}
FIXES = {
    "input_distribution": "torch.randn instead of torch.rand: signed inputs with spread",
    "degenerate_output": "the softmax output is multiplied by the number of positions it normalizes over: "
                         "softmax of logits clamped to [0, 1] over 131072 positions is below 2.1e-5 everywhere, "
                         "so all-zeros passed at tolerance 1e-4",
}
EXCLUDE = None
