"""Upstream-format fixture (KernelBench contract only, no Crucible metadata): softmax of rand over wide rows.

Kept as upstream draws it: over 16384 columns every output is ~6e-5, so all-zeros pass at 1e-4 and
a degeneracy probe should flag it.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies softmax over the last axis of a (batch_size, dim) tensor."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 64
dim = 16384


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
