"""KernelBench L1 43: MaxPool3d, kernel 3, stride 2, padding 1, dilation 3, over (N, C, D, H, W)."""

import torch
import torch.nn as nn

batch_size = 16
channels = 32
dim1 = 128
dim2 = 128
dim3 = 128

kernel_size = 3
stride = 2
padding = 1
dilation = 3


class Model(nn.Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.maxpool = nn.MaxPool3d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation,
                                    return_indices=return_indices, ceil_mode=ceil_mode)

    def forward(self, x):
        return self.maxpool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, dim1, dim2, dim3)]


def get_init_inputs():
    return [kernel_size, stride, padding, dilation]


SMALL = {"batch_size": 2, "channels": 4, "dim1": 31, "dim2": 33, "dim3": 29}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
