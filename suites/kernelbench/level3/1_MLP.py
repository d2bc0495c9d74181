"""KernelBench L3 1: a multi-layer perceptron (Linear + ReLU per hidden layer, then a Linear)."""
import torch
import torch.nn as nn

batch_size = 128
input_size = 16384
layer_sizes = [16384, 16384]
output_size = 8192


class Model(nn.Module):
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers = []
        width = input_size
        for hidden in layer_sizes:
            layers += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        layers.append(nn.Linear(width, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, layer_sizes, output_size]


SMALL = {"batch_size": 8, "input_size": 256, "layer_sizes": [256, 256], "output_size": 128}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
}
EXCLUDE = None
