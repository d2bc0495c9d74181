"""KernelBench L1 40: LayerNorm over the last three axes (features, dim1, dim2) with affine weight and bias."""

import torch
import torch.nn as nn

batch_size = 16
features = 64
dim1 = 256
dim2 = 256


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2) * 3.0 + 1.5]


def get_init_inputs():
    return [(features, dim1, dim2)]


SMALL = {"batch_size": 4, "features": 8, "dim1": 31, "dim2": 33}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
    'degenerate_output': 'inputs scaled by 3 and offset by 1.5: randn is already normalised, so returning the input passed at 1e-2 at full size',
}
EXCLUDE = None
