"""KernelBench L3 39: a 6-layer GRU over a (seq, batch, feature) sequence; returns every step's
output."""
import torch
import torch.nn as nn

batch_size = 10
seq_len = 512
input_size = 128
hidden_size = 256
num_layers = 6


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers=3, bias=True, batch_first=False):
        super().__init__()
        self.gru = nn.GRU(input_size, hidden_size, num_layers, bias, batch_first, dropout=0,
                          bidirectional=False)

    def forward(self, x, h0):
        output, _ = self.gru(x, h0)
        return output


def get_inputs():
    return [torch.randn(seq_len, batch_size, input_size),
            torch.randn((num_layers, batch_size, hidden_size))]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]


SMALL = {"batch_size": 2, "seq_len": 16, "input_size": 16, "hidden_size": 32}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
}
EXCLUDE = None
