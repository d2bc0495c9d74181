"""KernelBench L1 50: the first AlexNet convolution: Conv2d 3 -> 96 channels, kernel 11, stride 4, padding 2, with
bias, on 224 x 224 images.
"""

import torch
import torch.nn as nn

batch_size = 256
num_classes = 1000


class Model(nn.Module):
    # num_classes is accepted and unused, as upstream: only the first convolution is benchmarked.
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels=3, out_channels=96, kernel_size=11, stride=4, padding=2)

    def forward(self, x):
        return self.conv1(x)


def get_inputs():
    return [torch.randn(batch_size, 3, 224, 224)]


def get_init_inputs():
    return [num_classes]


SMALL = {"batch_size": 2}
FIXES = {
    'input_distribution': 'torch.randn instead of torch.rand: signed inputs with spread (upstream draws uniform [0, 1))',
}
EXCLUDE = None
