"""KernelBench L2 99: linear layer, GELU, softmax over features."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
in_features = 8192
out_features = 8192
input_scale = 5.0


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        x = self.linear(x)
        x = F.gelu(x)
        return torch.softmax(x, dim=1)


def get_inputs():
    # Pre-activations of std ~2.9 leave GELU outputs up to ~11, so a few features per row carry
    # real probability; at std ~0.6 every probability is below 2e-3.
    return [torch.randn(batch_size, in_features) * input_scale]


def get_init_inputs():
    return [in_features, out_features]


SMALL = {"batch_size": 16, "in_features": 64, "out_features": 64}
FIXES = {
    "input_distribution": "torch.randn * 5 instead of torch.rand",
    "degenerate_output": "softmax over 8192 near-equal GELU outputs is ~1e-4 everywhere, so all-zeros passed at "
                         "tolerance 1e-2; wider pre-activations give row maxima well above 1e-2",
}
EXCLUDE = None
