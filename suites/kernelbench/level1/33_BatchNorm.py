"""KernelBench L1 33: BatchNorm2d over (N, C, H, W) in training mode: per-channel batch statistics, affine weight
and bias.
"""

import torch
import torch.nn as nn

batch_size = 64
features = 64
dim1 = 512
dim2 = 512


class Model(nn.Module):
    # Kept in training mode, as upstream: in eval mode fresh running statistics (mean 0, var 1)
    # would make this the identity up to 1 / sqrt(1 + eps).
    def __init__(self, num_features):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2) * 3.0 + 1.5]


def get_init_inputs():
    return [features]


SMALL = {"batch_size": 8, "features": 16, "dim1": 31, "dim2": 33}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
    'degenerate_output': 'inputs scaled by 3 and offset by 1.5: randn is already normalised, so returning the input passed at 1e-2 at full size',
}
EXCLUDE = None
