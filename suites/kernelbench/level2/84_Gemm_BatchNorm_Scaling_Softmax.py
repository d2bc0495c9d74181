"""KernelBench L2 84: linear layer, batch norm (batch statistics), learned scalar scale, softmax over
features."""

import torch
import torch.nn as nn

batch_size = 1024
in_features = 8192
out_features = 8192
bn_eps = 1e-5
bn_momentum = 0.1
scale_shape = (1,)


class Model(nn.Module):
    def __init__(self, in_features, out_features, bn_eps=1e-5, bn_momentum=0.1, scale_shape=(1,)):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bn = nn.BatchNorm1d(out_features, eps=bn_eps, momentum=bn_momentum)
        # Batch norm makes the logits unit-variance whatever the input; softmax over 8192 of them
        # stays below ~6e-3 everywhere. Starting the scale at 3 gives each row a few dominant features.
        self.scale = nn.Parameter(torch.full(scale_shape, 3.0))
        self.softmax = nn.Softmax(dim=1)

    def forward(self, x):
        x = self.gemm(x)
        x = self.bn(x)
        x = self.scale * x
        return self.softmax(x)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bn_eps, bn_momentum, scale_shape]


SMALL = {"batch_size": 16, "in_features": 64, "out_features": 64}
FIXES = {
    "input_distribution": "torch.randn instead of torch.rand: signed inputs with spread",
    "degenerate_output": "the learned scale starts at 3 instead of 1: softmax over 8192 unit-variance logits is "
                         "below 1e-2 everywhere, so all-zeros passed at tolerance 1e-2",
}
EXCLUDE = None
