"""KernelBench L1 23: softmax over the last axis (dim 1) of a (batch_size, dim) tensor of peaked logits."""

import torch
import torch.nn as nn

batch_size = 4096
dim = 393216
# Logit spread: randn * 4 makes each row's distribution peaked (~800 entries above 1e-4 and
# ~10 above 1e-2 per full-size row) instead of nearly uniform.
logit_scale = 4.0


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim) * logit_scale]


def get_init_inputs():
    return []


SMALL = {"batch_size": 16, "dim": 16383}
FIXES = {
    "input_distribution": "torch.randn * 4 instead of torch.rand",
    "degenerate_output": "softmax of rand over 393216 columns is ~2.5e-6 everywhere, so all-zeros pass at 1e-4; "
                         "logits of spread 4 give peaked rows (largest entry 0.05-0.25, ~800 entries above 1e-4) "
                         "that must be right. A row sums to 1, so at most 1e4 of its 393216 entries can exceed "
                         "1e-4: the check rests on each row's peak, by construction",
}
EXCLUDE = None
