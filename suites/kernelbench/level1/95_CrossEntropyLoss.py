"""KernelBench L1 95: mean cross-entropy of (batch_size, num_classes) logits against int64 class targets."""

import torch
import torch.nn as nn

batch_size = 32768
num_classes = 4096
input_shape = (num_classes,)
dim = 1


class Model(nn.Module):
    def forward(self, predictions, targets):
        return torch.nn.functional.cross_entropy(predictions, targets)


def get_inputs():
    # Signed logits whose spread (0.5 to 3) is drawn per call, so that the loss varies between calls.
    scale = 0.5 + 2.5 * torch.rand(())
    predictions = torch.randn(batch_size, *input_shape) * scale
    targets = torch.randint(0, num_classes, (batch_size,))
    return [predictions, targets]


def get_init_inputs():
    return []


SMALL = {"batch_size": 256, "num_classes": 1000}
FIXES = {
    "input_distribution": "logits torch.randn * s with s in [0.5, 3) drawn per call, instead of rand",
    "degenerate_output": "with rand logits the loss is log(4096) + 0.04 +- 0.002 on every call, so a constant "
                         "passes at 1e-2",
    "integer_inputs": "class targets are int64 and stay int64",
}
EXCLUDE = None
