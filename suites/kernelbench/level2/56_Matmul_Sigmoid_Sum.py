"""KernelBench L2 56: linear layer, sigmoid, sum over features."""

import torch
import torch.nn as nn

batch_size = 128
input_size = 32768
hidden_size = 32768


class Model(nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.linear = nn.Linear(input_size, hidden_size)
        # A sum of many sigmoids of logits symmetric about 0 is hidden_size / 2 within ~0.3% for
        # any input; a bias of 1 breaks the symmetry, so the sum follows the spread of each row.
        nn.init.constant_(self.linear.bias, 1.0)

    def forward(self, x):
        x = self.linear(x)
        x = torch.sigmoid(x)
        return torch.sum(x, dim=1, keepdim=True)


def get_inputs():
    # Rows of different spread give different sums once the bias makes the sigmoid asymmetric.
    row_scale = torch.empty(batch_size, 1).uniform_(0.5, 4.0)
    return [torch.randn(batch_size, input_size) * row_scale]


def get_init_inputs():
    return [input_size, hidden_size]


SMALL = {"batch_size": 16, "input_size": 64, "hidden_size": 64}
FIXES = {
    "input_distribution": "torch.randn times a per-row scale drawn from U(0.5, 4) instead of torch.rand",
    "degenerate_output": "linear.bias is initialised to 1.0: with the default init every row's sum of 32768 "
                         "sigmoids is 16384 within ~0.3%, so a constant output passed at tolerance 1e-2",
}
EXCLUDE = None
