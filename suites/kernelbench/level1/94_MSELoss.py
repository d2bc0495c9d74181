"""KernelBench L1 94: mean squared error: mean((predictions - targets) ** 2) over all elements."""

import torch
import torch.nn as nn

batch_size = 32768
input_shape = (32768,)
dim = 1


class Model(nn.Module):
    def forward(self, predictions, targets):
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    # Heavy-tailed (Gaussian with a log-normal scale per element, kurtosis ~8) and signed, with a
    # per-call scale so that the loss varies from call to call; |x| stays far below fp16's range.
    scale = 0.5 + torch.rand(())
    predictions = torch.randn(batch_size, *input_shape) * torch.exp(0.5 * torch.randn(batch_size, *input_shape))
    targets = torch.randn(batch_size, *input_shape) * torch.exp(0.5 * torch.randn(batch_size, *input_shape))
    return [predictions * scale, targets]


def get_init_inputs():
    return []


SMALL = {"batch_size": 64, "input_shape": (4093,)}
FIXES = {
    "input_distribution": "signed heavy-tailed inputs (randn * exp(0.5 * randn), kurtosis ~8) with a per-call "
                          "scale in [0.5, 1.5) on the predictions, instead of rand with a rand(()) scale",
    "degenerate_output": "on rand inputs the loss is the closed form s^2/3 - s/2 + 1/3 of the scale s to ~1e-5, "
                         "and s is the max of a few thousand predictions (bounded support), so a kernel can skip "
                         "the data; with unbounded inputs an estimate from n elements is off by ~sqrt(5 / n), so "
                         "passing at 1e-4 takes nearly all of them",
}
EXCLUDE = None
