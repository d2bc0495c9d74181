"""KernelBench L2 37: linear layer, swish, add a learned bias, group norm over feature groups."""

import torch
import torch.nn as nn

batch_size = 32768
in_features = 1024
out_features = 4096
num_groups = 64
bias_shape = (out_features,)


class Model(nn.Module):
    def __init__(self, in_features, out_features, num_groups, bias_shape):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.group_norm = nn.GroupNorm(num_groups, out_features)

    def forward(self, x):
        x = self.matmul(x)
        x = torch.sigmoid(x) * x
        x = x + self.bias
        return self.group_norm(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, num_groups, bias_shape]


SMALL = {"batch_size": 16, "in_features": 64, "out_features": 128, "num_groups": 8}
FIXES = {"input_distribution": "torch.randn instead of torch.rand: signed inputs reach swish's negative side"}
EXCLUDE = None
