"""KernelBench L3 42: a 6-layer bidirectional GRU; returns the final hidden state h_n (both
directions)."""
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
                          bidirectional=True)

    def forward(self, x, h0):
        _, h_n = self.gru(x, h0)
        return h_n


def get_inputs():
    return [torch.randn(seq_len, batch_size, input_size),
            torch.randn((num_layers * 2, batch_size, hidden_size))]


def get_init_inputs():
    return [input_size, hidden_size, num_layers]


SMALL = {"batch_size": 2, "seq_len": 16, "input_size": 16, "hidden_size": 32}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
}
EXCLUDE = None
