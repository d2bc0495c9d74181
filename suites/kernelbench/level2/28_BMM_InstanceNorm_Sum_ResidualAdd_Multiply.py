"""KernelBench L2 28: linear layer, instance norm of each row (viewed as a 1 x 1 x features image),
add a second input y, multiply by y."""

import torch
import torch.nn as nn

batch_size = 1024
in_features = 8192
out_features = 8192


class Model(nn.Module):
    def __init__(self, in_features, out_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.bmm = nn.Linear(in_features, out_features)
        # Each row is normalized as a 1 x 1 x out_features image with one channel; without affine
        # parameters or running stats num_features only has to match that single channel.
        self.instance_norm = nn.InstanceNorm2d(1, eps=eps, momentum=momentum)

    def forward(self, x, y):
        x = self.bmm(x)
        x = self.instance_norm(x.unsqueeze(1).unsqueeze(1)).squeeze(1).squeeze(1)
        x = x + y
        return x * y


def get_inputs():
    return [torch.randn(batch_size, in_features), torch.randn(batch_size, out_features)]


def get_init_inputs():
    return [in_features, out_features]


SMALL = {"batch_size": 16, "in_features": 64, "out_features": 64}
FIXES = {"input_distribution": "torch.randn instead of torch.rand for both inputs: signed inputs with spread"}
EXCLUDE = None
