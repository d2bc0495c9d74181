"""KernelBench L1 96: smooth L1 (Huber) loss, beta 1, mean over all elements."""

import torch
import torch.nn as nn

batch_size = 32768
input_shape = (32768,)
dim = 1


class Model(nn.Module):
    def forward(self, predictions, targets):
        return torch.nn.functional.smooth_l1_loss(predictions, targets)


def get_inputs():
    # Heavy-tailed signed inputs: |predictions - targets| falls on both sides of beta = 1 (about half
    # each), so both branches of the loss count; the per-call scale varies the loss between calls.
    scale = 0.5 + torch.rand(())
    predictions = torch.randn(batch_size, *input_shape) * torch.exp(0.5 * torch.randn(batch_size, *input_shape))
    targets = torch.randn(batch_size, *input_shape) * torch.exp(0.5 * torch.randn(batch_size, *input_shape))
    return [predictions * scale, targets]


def get_init_inputs():
    return []


SMALL = {"batch_size": 64, "input_shape": (4093,)}
FIXES = {
    "input_distribution": "signed heavy-tailed inputs (randn * exp(0.5 * randn), kurtosis ~8) with a per-call "
                          "scale in [0.5, 1.5) on the predictions, instead of rand",
    "degenerate_output": "on rand inputs |predictions - targets| < 1 always, so the loss is 0.5 * MSE (its linear "
                         "branch is never taken) and a closed form of the rand(()) scale; now about half the "
                         "differences fall on each side of beta = 1",
}
EXCLUDE = None
