"""KernelBench L2 45: linear layer, sigmoid, second linear layer, logsumexp over features."""

import torch
import torch.nn as nn

batch_size = 16384
input_size = 2048
hidden_size = 4096
output_size = 1024


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.linear1 = nn.Linear(input_size, hidden_size)
        self.linear2 = nn.Linear(hidden_size, output_size)
        # With the default init the logits stay within a few tenths of each other for any input, so the
        # logsumexp is log(output_size) plus a near-constant; wider weights make it follow x.
        nn.init.normal_(self.linear2.weight, std=0.3)

    def forward(self, x):
        x = self.linear1(x)
        x = torch.sigmoid(x)
        x = self.linear2(x)
        return torch.logsumexp(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]


SMALL = {"batch_size": 16, "input_size": 64, "hidden_size": 128, "output_size": 32}
FIXES = {
    "input_distribution": "torch.randn instead of torch.rand: signed inputs with spread",
    "degenerate_output": "linear2.weight is initialised from N(0, 0.3^2) instead of the default "
                         "U(+-1/sqrt(hidden_size)): with the default the row logsumexp varied by < 0.01 across "
                         "inputs (about 7.0 always), so a constant output passed at tolerance 1e-2",
}
EXCLUDE = None
