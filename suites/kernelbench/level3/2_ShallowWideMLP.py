"""KernelBench L3 2: a shallow, wide MLP (two very wide hidden layers)."""
import torch
import torch.nn as nn

batch_size = 128
input_size = 16384
hidden_layer_sizes = [32768, 32768]
output_size = 16384


class Model(nn.Module):
    def __init__(self, input_size, hidden_layer_sizes, output_size):
        super().__init__()
        layers = []
        width = input_size
        for hidden in hidden_layer_sizes:
            layers += [nn.Linear(width, hidden), nn.ReLU()]
            width = hidden
        layers.append(nn.Linear(width, output_size))
        self.network = nn.Sequential(*layers)

    def forward(self, x):
        return self.network(x)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_layer_sizes, output_size]


SMALL = {"batch_size": 8, "input_size": 256, "hidden_layer_sizes": [512, 512], "output_size": 256}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
}
EXCLUDE = None
