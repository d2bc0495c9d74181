"""KernelBench L3 35: a 6-layer LSTM over a sequence, then a linear layer on the last time step."""
import math

import torch
import torch.nn as nn

batch_size = 10
sequence_length = 512
input_size = 128
hidden_size = 256
num_layers = 6
output_size = 10
dropout = 0.0


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers, output_size, dropout=0.0):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True, dropout=dropout,
                            bidirectional=False)
        self.fc = nn.Linear(hidden_size, output_size)
        # Weights ~ U(+-2 sqrt(3 / fan_in)) (std 2 / sqrt(fan_in)): with PyTorch's default
        # U(+-1 / sqrt(hidden)) each layer damps the input's effect, and after six layers the last
        # step's output was the same for every sample within tolerance.
        for name, weight in self.lstm.named_parameters():
            if name.startswith("weight"):
                bound = 2 * math.sqrt(3 / weight.shape[1])
                nn.init.uniform_(weight, -bound, bound)

    def forward(self, x, h0, c0):
        """x: (batch, seq, input); h0, c0: (num_layers, batch, hidden) -> (batch, output_size)."""
        out, _ = self.lstm(x, (h0, c0))
        return self.fc(out[:, -1, :])


def get_inputs():
    state_shape = (num_layers, batch_size, hidden_size)
    return [torch.randn(batch_size, sequence_length, input_size), torch.randn(state_shape),
            torch.randn(state_shape)]


def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size, dropout]


SMALL = {"batch_size": 2, "sequence_length": 16, "input_size": 16, "hidden_size": 32}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
    "rng_in_forward": "upstream drew h0 and c0 with torch.randn inside forward, so the reference "
                      "consumed the RNG before the candidate; they are now inputs (as in L3 36-42)",
    "hardcoded_precision": "upstream's h0/c0 were fp32 whatever the requested precision; as "
                           "inputs they are cast to it like x",
    "dropout": "the LSTM's inter-layer dropout is 0.0: a train-mode mask would differ between "
               "reference and candidate",
    "degenerate_output": "LSTM weights drawn with std 2/sqrt(fan_in) instead of PyTorch's "
                         "default: with the default every sample's output equalled the batch "
                         "mean within 1e-2 (and within 1e-4 for most elements)",
}
EXCLUDE = None
