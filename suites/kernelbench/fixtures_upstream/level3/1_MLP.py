"""Upstream-format fixture (KernelBench contract only, no Crucible metadata): an MLP on rand inputs."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear + ReLU for each hidden width, then a final Linear."""

    def __init__(self, input_size, layer_sizes, output_size):
        super(Model, self).__init__()
        layers = []
        current = input_size
        for width in layer_sizes:
            layers.append(nn.Linear(current, width))
            layers.append(nn.ReLU())
            current = width
        layers.append(nn.Linear(current, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


batch_size = 64
input_size = 1024
layer_sizes = [2048, 2048]
output_size = 512


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, layer_sizes, output_size]
