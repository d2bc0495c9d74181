"""KernelBench L1 98: kl_div(log(predictions), targets, reduction='batchmean') for row-wise softmax distributions.
"""

import torch
import torch.nn as nn

batch_size = 8192 * 2
input_shape = (8192 * 2,)
dim = 1


class Model(nn.Module):
    def forward(self, predictions, targets):
        return torch.nn.functional.kl_div(torch.log(predictions), targets, reduction="batchmean")


def get_inputs():
    # Softmax of Gaussian logits: non-uniform distributions. The predictions' logit spread (0.25 to
    # 0.75) is drawn per call so the divergence varies between calls; it stays small enough that the
    # smallest probabilities (~1e-6) do not underflow in fp16.
    scale = 0.25 + 0.5 * torch.rand(())
    predictions = (torch.randn(batch_size, *input_shape) * scale).softmax(dim=-1)
    targets = (torch.randn(batch_size, *input_shape) * 0.5).softmax(dim=-1)
    return [predictions, targets]


def get_init_inputs():
    return []


SMALL = {"batch_size": 64, "input_shape": (4093,)}
FIXES = {
    "input_distribution": "softmax of Gaussian logits (spread 0.25-0.75 per call for predictions, 0.5 for "
                          "targets) instead of softmax of rand",
    "degenerate_output": "softmax of rand over 16384 entries is nearly uniform: the divergence is 0.04-0.08, a "
                         "smooth function of the one rand(()) scale, and a constant is within 0.02 of it on every "
                         "call",
}
EXCLUDE = None
