"""KernelBench L3 13: a DenseNet transition layer (BN, ReLU, 1x1 conv, 2x2 average pool)."""
import torch
import torch.nn as nn

batch_size = 128
num_input_features = 32
num_output_features = 64
height, width = 256, 256


class Model(nn.Module):
    def __init__(self, num_input_features, num_output_features):
        super().__init__()
        self.transition = nn.Sequential(
            nn.BatchNorm2d(num_input_features),
            nn.ReLU(inplace=True),
            nn.Conv2d(num_input_features, num_output_features, kernel_size=1, bias=False),
            nn.AvgPool2d(kernel_size=2, stride=2),
        )

    def forward(self, x):
        return self.transition(x)


def get_inputs():
    return [torch.randn(batch_size, num_input_features, height, width)]


def get_init_inputs():
    return [num_input_features, num_output_features]


SMALL = {"batch_size": 4, "height": 32, "width": 32}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
}
EXCLUDE = None
