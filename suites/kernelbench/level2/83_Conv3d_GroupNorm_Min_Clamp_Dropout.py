"""KernelBench L2 83: 3-D convolution, group norm, elementwise minimum with max_value, clamp to
[min_value, max_value], dropout (evaluation semantics: the identity)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_channels = 3
out_channels = 16
depth = 16
height = 64
width = 64
kernel_size = 3
groups = 8
min_value = 0.0
max_value = 1.0
dropout_p = 0.2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups, min_value, max_value, dropout_p):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.norm = nn.GroupNorm(groups, out_channels)
        self.min_value = min_value
        self.max_value = max_value
        self.dropout_p = dropout_p

    def forward(self, x):
        x = self.conv(x)
        x = self.norm(x)
        x = torch.minimum(x, torch.tensor(self.max_value, dtype=x.dtype, device=x.device))
        x = torch.clamp(x, min=self.min_value, max=self.max_value)
        # Evaluation semantics whatever the module's mode: a train-mode mask would be a second
        # random draw that the reference and a candidate cannot share.
        return F.dropout(x, p=self.dropout_p, training=False)


def get_inputs():
    return [torch.randn(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups, min_value, max_value, dropout_p]


SMALL = {"batch_size": 2, "out_channels": 8, "depth": 6, "height": 8, "width": 8, "groups": 4}
FIXES = {
    "input_distribution": "torch.randn instead of torch.rand: signed inputs with spread",
    "degenerate_output": "the elementwise minimum is taken with max_value, not min_value: upstream's "
                         "min(x, 0) followed by clamp to [0, 1] is 0 identically. The minimum is now redundant "
                         "with the clamp's upper bound, which a kernel may exploit.",
    "dropout": "evaluation semantics (F.dropout with training=False, the identity) instead of a train-mode mask",
}
EXCLUDE = None
