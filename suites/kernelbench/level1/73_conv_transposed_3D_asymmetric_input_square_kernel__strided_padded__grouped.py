"""KernelBench L1 73: ConvTranspose3d, kernel 3, stride 2, padding 1, 4 groups, no bias, on a 32 x 64 x 128 volume.
"""

import torch
import torch.nn as nn

batch_size = 4
in_channels = 32
out_channels = 32
kernel_size = 3
depth = 32
height = 64
width = 128
stride = 2
padding = 1
groups = 4


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, groups=1, bias=False):
        super().__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, groups=groups, bias=bias)

    def forward(self, x):
        return self.conv_transpose3d(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, groups]


SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 8, "depth": 7, "height": 9, "width": 17}
FIXES = {
    'other': "upstream's constructor takes output_padding before groups, so get_init_inputs' groups=4 landed in the unused output_padding and the convolution ran ungrouped; here the sixth constructor argument is groups and the convolution is grouped, as the problem's name says",
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
