"""KernelBench L1 75: ConvTranspose2d, kernel (3, 5), stride (2, 3), padding (1, 2), dilation (2, 1), 4 groups, no
bias.
"""

import torch
import torch.nn as nn

batch_size = 16
in_channels = 32
out_channels = 64
kernel_size = (3, 5)
height = 128
width = 256
stride = (2, 3)
padding = (1, 2)
dilation = (2, 1)
groups = 4


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=(1, 1), padding=(0, 0), dilation=(1, 1),
                 groups=1, bias=False):
        super().__init__()
        self.conv_transpose2d = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride,
                                                   padding=padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x):
        return self.conv_transpose2d(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation, groups]


SMALL = {"batch_size": 2, "in_channels": 8, "out_channels": 16, "height": 15, "width": 17}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
