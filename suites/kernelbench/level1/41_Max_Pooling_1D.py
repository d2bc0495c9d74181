"""KernelBench L1 41: MaxPool1d, kernel 8, stride 1, padding 4, dilation 3, over (N, C, L)."""

import torch
import torch.nn as nn

batch_size = 64
features = 192
sequence_length = 65536

kernel_size = 8
stride = 1
padding = 4
dilation = 3
return_indices = False


class Model(nn.Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False):
        super().__init__()
        self.maxpool = nn.MaxPool1d(kernel_size=kernel_size, stride=stride, padding=padding, dilation=dilation,
                                    return_indices=return_indices)

    def forward(self, x):
        return self.maxpool(x)


def get_inputs():
    return [torch.randn(batch_size, features, sequence_length)]


def get_init_inputs():
    return [kernel_size, stride, padding, dilation, return_indices]


SMALL = {"batch_size": 4, "features": 8, "sequence_length": 4093}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
