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
    "input_distribution": "heavy-tailed signed inputs (randn * exp(0.5 * randn)) and a per-call scale in [0.5, "
                          "1.5) instead of rand (upstream's rand(()) scale is kept in spirit)",
    "degenerate_output": "a mean over 1e9 iid elements concentrates: without a per-call scale the loss is the "
                         "same to ~1e-4 on every call, so a constant passes",
}
EXCLUDE = None
