"""KernelBench L2 77: 3-D transposed conv, scale, batch norm (batch statistics), global average pool."""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
depth = 16
height = 32
width = 32
kernel_size = 5
scale_factor = 2.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, scale_factor, eps=1e-5, momentum=0.1):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size)
        self.scale_factor = scale_factor
        self.batch_norm = nn.BatchNorm3d(out_channels, eps=eps, momentum=momentum)
        self.global_avg_pool = nn.AdaptiveAvgPool3d((1, 1, 1))

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x * self.scale_factor
        x = self.batch_norm(x)
        return self.global_avg_pool(x)


def get_inputs():
    # A per-(sample, channel) offset: batch norm removes each channel's batch mean, and what the
    # global average keeps is how a sample's mean differs from it, which is ~0 for identically
    # distributed samples; offsets make the samples' means differ.
    x = torch.randn(batch_size, in_channels, depth, height, width)
    return [x + torch.randn(batch_size, in_channels, 1, 1, 1)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale_factor]


SMALL = {"batch_size": 4, "in_channels": 4, "out_channels": 8, "depth": 4, "height": 6, "width": 6}
FIXES = {
    "input_distribution": "torch.randn plus a per-(sample, channel) torch.randn offset instead of torch.rand",
    "degenerate_output": "with identically distributed samples every sample's channel mean equals the batch mean "
                         "that batch norm subtracts, so the output was ~0 and all-zeros passed at 1e-2",
}
EXCLUDE = None
