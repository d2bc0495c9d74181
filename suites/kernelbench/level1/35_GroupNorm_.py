"""KernelBench L1 35: GroupNorm: channels split into num_groups groups, each normalised over (channels in group, H,
W), then affine.
"""

import torch
import torch.nn as nn

batch_size = 112
features = 64
num_groups = 8
dim1 = 512
dim2 = 512


class Model(nn.Module):
    def __init__(self, num_features, num_groups):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2) * 3.0 + 1.5]


def get_init_inputs():
    return [features, num_groups]


SMALL = {"batch_size": 4, "features": 16, "dim1": 31, "dim2": 33}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
    'degenerate_output': 'inputs scaled by 3 and offset by 1.5: randn is already normalised, so returning the input passed at 1e-2 at full size',
}
EXCLUDE = None
