"""KernelBench L2 41: linear layer, batch norm (batch statistics), GELU, ReLU."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16384
in_features = 4096
out_features = 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.batch_norm = nn.BatchNorm1d(out_features)

    def forward(self, x):
        x = self.gemm(x)
        x = self.batch_norm(x)
        x = F.gelu(x)
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]


SMALL = {"batch_size": 16, "in_features": 64, "out_features": 64}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
