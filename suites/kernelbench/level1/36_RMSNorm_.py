"""KernelBench L1 36: RMS norm over the channel axis: x / sqrt(mean(x ** 2, dim=1) + eps), eps 1e-5, no weight."""

import torch
import torch.nn as nn

batch_size = 112
features = 64
dim1 = 512
dim2 = 512


class Model(nn.Module):
    def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x):
        rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + self.eps)
        return x / rms


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features]


SMALL = {"batch_size": 4, "features": 16, "dim1": 31, "dim2": 33}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
