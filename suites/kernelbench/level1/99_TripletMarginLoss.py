"""KernelBench L1 99: TripletMarginLoss (margin from the constructor, p = 2): mean of max(d(a, p) - d(a, n) +
margin, 0).
"""

import torch
import torch.nn as nn

batch_size = 32768
input_shape = (8192,)
dim = 1


class Model(nn.Module):
    def __init__(self, margin=1.0):
        super().__init__()
        self.loss_fn = torch.nn.TripletMarginLoss(margin=margin)

    def forward(self, anchor, positive, negative):
        return self.loss_fn(anchor, positive, negative)


def get_inputs():
    # Per-row spreads for positives and negatives put d(a, p) - d(a, n) well on both sides of -margin
    # (the hinge is active in about half the rows); the anchor's per-call scale varies the loss.
    scale = 0.5 + torch.rand(())
    anchor = torch.randn(batch_size, *input_shape) * scale
    positive = torch.randn(batch_size, *input_shape) * (1.5 * torch.rand(batch_size, 1))
    negative = torch.randn(batch_size, *input_shape) * (1.5 * torch.rand(batch_size, 1))
    return [anchor, positive, negative]


def get_init_inputs():
    return [1.0]


SMALL = {"batch_size": 128, "input_shape": (1023,)}
FIXES = {
    "input_distribution": "signed inputs with per-row spreads for positive and negative and a per-call anchor "
                          "scale, instead of rand",
    "degenerate_output": "with rand inputs all distances concentrate near sqrt(8192 / 6), so the hinge is always "
                         "active and the loss is the margin give or take 0.03 on every call",
}
EXCLUDE = None
