"""KernelBench L2 95: linear layer, add a learned vector, swish, tanh, GELU, hardtanh."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
in_features = 8192
out_features = 8192
add_value_shape = (out_features,)


class Model(nn.Module):
    def __init__(self, in_features, out_features, add_value_shape):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.add_value = nn.Parameter(torch.randn(add_value_shape))

    def forward(self, x):
        x = self.matmul(x)
        x = x + self.add_value
        x = torch.sigmoid(x) * x
        x = torch.tanh(x)
        x = F.gelu(x)
        return F.hardtanh(x, min_val=-1, max_val=1)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, add_value_shape]


SMALL = {"batch_size": 16, "in_features": 64, "out_features": 64}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs with spread"}
EXCLUDE = None
