"""KernelBench L2 9: linear layer, subtract a constant, multiply by a constant, ReLU."""

import torch
import torch.nn as nn

batch_size = 1024
in_features = 8192
out_features = 8192
subtract_value = 2.0
multiply_value = 1.5
input_scale = 4.0


class Model(nn.Module):
    def __init__(self, in_features, out_features, subtract_value, multiply_value):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.subtract_value = subtract_value
        self.multiply_value = multiply_value

    def forward(self, x):
        x = self.linear(x)
        x = x - self.subtract_value
        x = x * self.multiply_value
        return torch.relu(x)


def get_inputs():
    # The linear output has standard deviation ~0.58 * input_scale; at scale 4 about a fifth of
    # it lies above subtract_value, so the ReLU passes real signal.
    return [torch.randn(batch_size, in_features) * input_scale]


def get_init_inputs():
    return [in_features, out_features, subtract_value, multiply_value]


SMALL = {"batch_size": 16, "in_features": 64, "out_features": 64}
FIXES = {
    "input_distribution": "torch.randn * 4 instead of torch.rand",
    "degenerate_output": "upstream's linear output (std ~0.3) almost never exceeds 2.0, so nearly every output is "
                         "0; scaled signed inputs put about 20% of the outputs above the ReLU threshold",
}
EXCLUDE = None
