"""KernelBench L1 34: InstanceNorm2d: each (sample, channel) plane normalised by its own mean and variance."""

import torch
import torch.nn as nn

batch_size = 112
features = 64
dim1 = 512
dim2 = 512


class Model(nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(num_features=num_features)

    def forward(self, x):
        return self.inorm(x)


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2) * 3.0 + 1.5]


def get_init_inputs():
    return [features]


SMALL = {"batch_size": 6, "features": 8, "dim1": 63, "dim2": 65}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
    'degenerate_output': 'inputs scaled by 3 and offset by 1.5: randn is already normalised, so returning the input passed at 1e-2 at full size',
}
EXCLUDE = None
