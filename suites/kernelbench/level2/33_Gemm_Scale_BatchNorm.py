"""KernelBench L2 33: linear layer, learned per-feature scale, batch norm (batch statistics)."""

import torch
import torch.nn as nn

batch_size = 1024
in_features = 8192
out_features = 8192
scale_shape = (out_features,)


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale_shape, eps=1e-5, momentum=0.1):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.randn(scale_shape))
        self.bn = nn.BatchNorm1d(out_features, eps=eps, momentum=momentum)

    def forward(self, x):
        x = self.gemm(x)
        x = x * self.scale
        return self.bn(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale_shape]


SMALL = {"batch_size": 16, "in_features": 64, "out_features": 64}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
