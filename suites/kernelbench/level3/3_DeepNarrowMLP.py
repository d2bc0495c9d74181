"""KernelBench L3 3: a deep, narrow MLP (16 hidden layers of 1024)."""
import torch
import torch.nn as nn

batch_size = 1024
input_size = 8192
hidden_size = 1024
num_hidden_layers = 16
hidden_layer_sizes = [hidden_size] * num_hidden_layers
output_size = 8192


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
        # He initialisation keeps the signal's scale through the 16 ReLU layers; PyTorch's default
        # shrinks it about sixfold in variance per layer, which left the output independent of the
        # input within tolerance.
        for m in self.network:
            if isinstance(m, nn.Linear):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")

    def forward(self, x):
        return self.network(x)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_layer_sizes, output_size]


SMALL = {"batch_size": 8, "input_size": 256, "hidden_size": 64, "output_size": 256}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
    "degenerate_output": "linear weights use He initialisation; with PyTorch's default init "
                         "every sample's output equalled the batch mean at 1e-4",
}
EXCLUDE = None
