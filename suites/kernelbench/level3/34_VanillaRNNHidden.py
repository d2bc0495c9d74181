"""KernelBench L3 34: a vanilla (Elman) RNN unrolled over a sequence; returns every step's
output."""
import torch
import torch.nn as nn

batch_size = 8
input_size = 1024
hidden_size = 256
output_size = 128
sequence_length = 256


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.tanh = nn.Tanh()

    def forward(self, x, h0):
        """x: (seq_len, batch, input_size); h0: (batch, hidden_size) -> (seq_len, batch, output)."""
        hidden, outputs = h0, []
        for t in range(x.size(0)):
            hidden = self.tanh(self.i2h(torch.cat((x[t], hidden), dim=1)))
            outputs.append(self.h2o(hidden))
        return torch.stack(outputs, dim=0)


def get_inputs():
    return [torch.randn(sequence_length, batch_size, input_size),
            torch.randn(batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]


SMALL = {"batch_size": 4, "input_size": 64, "hidden_size": 32, "output_size": 16,
         "sequence_length": 16}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
}
EXCLUDE = None
