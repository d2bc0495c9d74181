"""KernelBench L1 100: hinge loss mean(clamp(1 - predictions * targets, min=0)) with +-1 integer targets."""

import torch
import torch.nn as nn

batch_size = 32768
input_shape = (32768,)
dim = 1


class Model(nn.Module):
    def forward(self, predictions, targets):
        # targets has shape (batch_size,) and broadcasts along the last axis, as upstream: it
        # requires batch_size == input_shape[0], which the sizes here keep.
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs():
    # Signed predictions with a per-call spread (0.5 to 2): the clamp is active for 2% to 30% of the
    # elements and the loss varies between calls.
    scale = 0.5 + 1.5 * torch.rand(())
    predictions = torch.randn(batch_size, *input_shape) * scale
    targets = torch.randint(0, 2, (batch_size,)) * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []


SMALL = {"batch_size": 1024, "input_shape": (1024,)}
FIXES = {
    "input_distribution": "signed predictions torch.randn * s with s in [0.5, 2) per call, instead of rand",
    "degenerate_output": "on rand predictions 1 - p * t lies in (0, 2], the clamp is never active and the loss is "
                         "~1 on every call",
    "integer_inputs": "the +-1 targets are an int64 tensor, never cast to the float precision",
}
EXCLUDE = None
