"""KernelBench L1 97: softmax(Q K^T / sqrt(E)) V over (batch, heads, sequence, E) tensors, no mask."""

import torch
import torch.nn as nn

batch_size = 32
num_heads = 32
sequence_length = 512
embedding_dimension = 1024


class Model(nn.Module):
    def forward(self, Q, K, V):
        return torch.nn.functional.scaled_dot_product_attention(Q, K, V)


def get_inputs():
    shape = (batch_size, num_heads, sequence_length, embedding_dimension)
    return [torch.randn(*shape), torch.randn(*shape), torch.randn(*shape)]


def get_init_inputs():
    return []


SMALL = {"batch_size": 2, "num_heads": 2, "sequence_length": 127, "embedding_dimension": 96}
FIXES = {
    "hardcoded_precision": "upstream creates Q, K, V on 'cuda' in float16; here they are fp32 CPU tensors that "
                           "the harness casts to the requested precision and moves",
    "input_distribution": "torch.randn instead of torch.rand: with rand the scores vary by only ~0.2, the weights "
                          "are nearly uniform and the output is mean(V) +- 0.013",
}
EXCLUDE = None
