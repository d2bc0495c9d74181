"""KernelBench L2 94: linear layer, learned bias, hardtanh, Mish, group norm."""

import torch
import torch.nn as nn

batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)
num_groups = 256


class Model(nn.Module):
    def __init__(self, in_features, out_features, bias_shape, num_groups):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.hardtanh = nn.Hardtanh()
        self.mish = nn.Mish()
        self.groupnorm = nn.GroupNorm(num_groups=num_groups, num_channels=out_features)

    def forward(self, x):
        x = self.gemm(x)
        x = x + self.bias
        x = self.hardtanh(x)
        x = self.mish(x)
        return self.groupnorm(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape, num_groups]


SMALL = {"batch_size": 16, "in_features": 64, "out_features": 128, "num_groups": 8}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
