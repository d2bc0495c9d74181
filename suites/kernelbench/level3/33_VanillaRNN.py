"""KernelBench L3 33: one step of a vanilla (Elman) RNN cell: h' = tanh(W [x, h] + b),
y = V h' + c."""
import torch
import torch.nn as nn

batch_size = 256
input_size = 16384
hidden_size = 16384
output_size = 8192
sequence_length = 256  # unused by the single step; kept from the KernelBench definition


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
        # The hidden state is an input and the new one is not stored: the module holds no state
        # between calls, so every call with the same inputs gives the same output.
        hidden = self.tanh(self.i2h(torch.cat((x, h0), dim=1)))
        return self.h2o(hidden)


def get_inputs():
    return [torch.randn(batch_size, input_size), torch.randn(batch_size, hidden_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]


SMALL = {"batch_size": 8, "input_size": 256, "hidden_size": 256, "output_size": 128}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
    "hardcoded_precision": "the initial hidden state was an fp32 tensor attribute made in "
                           "__init__ (never cast by model.to(dtype)); it is now the input h0, "
                           "cast to the requested precision like the other inputs",
    "other": "upstream kept the hidden state as a module attribute and overwrote it in forward, "
             "so each call depended on the previous one; forward now takes h0 and stores nothing",
}
EXCLUDE = None
