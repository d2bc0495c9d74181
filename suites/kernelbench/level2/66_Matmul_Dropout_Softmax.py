"""KernelBench L2 66: linear layer, dropout (evaluation semantics: the identity), softmax over features."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_features = 16384
out_features = 16384
dropout_p = 0.2
input_scale = 5.0


class Model(nn.Module):
    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.dropout_p = dropout_p

    def forward(self, x):
        x = self.matmul(x)
        # Evaluation semantics whatever the module's mode: a train-mode mask would be a second
        # random draw that the reference and a candidate cannot share.
        x = F.dropout(x, p=self.dropout_p, training=False)
        return torch.softmax(x, dim=1)


def get_inputs():
    # Logits of std ~2.9 put real mass on a few dozen of the 16384 features per row; at std ~0.6
    # every probability is below 1e-3 and all-zeros passes at tolerance 1e-2.
    return [torch.randn(batch_size, in_features) * input_scale]


def get_init_inputs():
    return [in_features, out_features, dropout_p]


SMALL = {"batch_size": 16, "in_features": 64, "out_features": 64}
FIXES = {
    "dropout": "evaluation semantics (F.dropout with training=False, the identity) instead of a train-mode mask",
    "input_distribution": "torch.randn * 5 instead of torch.rand",
    "degenerate_output": "softmax over 16384 near-equal logits is ~6e-5 everywhere; wider logits give row maxima "
                         "well above 1e-2",
}
EXCLUDE = None
