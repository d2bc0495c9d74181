"""KernelBench L1 45: AvgPool2d, kernel 11, stride 11 (the default), no padding, over (N, C, H, W)."""

import torch
import torch.nn as nn

batch_size = 16
channels = 64
height = 2048
width = 2048

kernel_size = 11


class Model(nn.Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.avg_pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.avg_pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size]


SMALL = {"batch_size": 2, "channels": 4, "height": 127, "width": 131}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
