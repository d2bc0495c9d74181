"""Upstream-format fixture (KernelBench contract only, no Crucible metadata): C = A @ B for square matrices."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Multiplies two N x N matrices."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 1024


def get_inputs():
    A = torch.rand(N, N)
    B = torch.rand(N, N)
    return [A, B]


def get_init_inputs():
    return []
