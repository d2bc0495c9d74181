"""KernelBench L1 46: AvgPool3d, kernel 3, stride 2, padding 1 (zero padding counted), over (N, C, D, H, W)."""

import torch
import torch.nn as nn

batch_size = 16
channels = 32
depth = 128
height = 128
width = 256

kernel_size = 3
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.avg_pool = nn.AvgPool3d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.avg_pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, depth, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]


SMALL = {"batch_size": 2, "channels": 4, "depth": 15, "height": 17, "width": 33}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
