"""KernelBench L1 37: x divided by its Frobenius norm over the whole tensor, rescaled by sqrt(numel) (x / RMS(x)).
"""

import math

import torch
import torch.nn as nn

batch_size = 112
features = 64
dim1 = 512
dim2 = 512


class Model(nn.Module):
    def forward(self, x):
        # The Frobenius norm of the whole tensor, divided by sqrt(numel) so that the output has unit
        # scale: plain x / ||x|| has RMS 1 / sqrt(numel) (2.3e-5 here), below any tolerance.
        rms = torch.norm(x, p="fro") / math.sqrt(x.numel())
        return x / rms


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2) * 3.0 + 1.5]


def get_init_inputs():
    return []


SMALL = {"batch_size": 4, "features": 16, "dim1": 31, "dim2": 33}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand',
    'degenerate_output': 'x / ||x||_F has sum of squares 1, so over 1.9e9 elements at least 95% of the outputs lie below 1e-4 whatever the input distribution (upstream: all of them; zeros pass). The norm is divided by the constant sqrt(numel) before the division (output x / RMS(x), unit scale); the work is unchanged: one global sum of squares, one elementwise divide; inputs scaled by 3 and offset by 1.5: randn is already normalised, so returning the input passed at 1e-2 at full size',
}
EXCLUDE = None
