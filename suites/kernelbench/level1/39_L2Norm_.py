"""KernelBench L1 39: x divided by the L2 norm of its row: x / ||x||_2 over dim 1."""

import torch
import torch.nn as nn

batch_size = 32768
dim = 65535


class Model(nn.Module):
    def forward(self, x):
        return x / torch.norm(x, p=2, dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []


SMALL = {"batch_size": 16, "dim": 8191}
FIXES = {
    "input_distribution": "torch.randn instead of torch.rand",
    "degenerate_output": "with rand every output is below 6.8e-3, so all-zeros pass at 1e-2; with randn the "
                         "largest entries of every unit row reach ~1.7e-2. Rows of 65535 with unit norm have RMS "
                         "3.9e-3, so at 1e-2 only their tails (~1% of entries) are checked, by construction",
}
EXCLUDE = None
