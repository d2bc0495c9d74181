"""Upstream-format fixture (KernelBench contract only, no Crucible metadata): ReLU on rand inputs."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Applies ReLU elementwise."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 256
dim = 4096


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
