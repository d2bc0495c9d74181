"""KernelBench L3 19: MobileNet v1 (Howard et al. 2017): depthwise-separable convolutions."""
import torch
import torch.nn as nn

batch_size = 10
input_channels = 3
height = 224
width = 224
num_classes = 1000
alpha = 1.0

# (output width before the alpha multiplier, stride) of the 13 depthwise-separable layers.
SEPARABLE_LAYERS = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
                    (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]


def conv_bn(inp, oup, stride):
    return nn.Sequential(
        nn.Conv2d(inp, oup, 3, stride, 1, bias=False),
        nn.BatchNorm2d(oup),
        nn.ReLU(inplace=True),
    )


def conv_dw(inp, oup, stride):
    """A 3x3 depthwise conv then a 1x1 pointwise conv, each followed by BN and ReLU."""
    return nn.Sequential(
        nn.Conv2d(inp, inp, 3, stride, 1, groups=inp, bias=False),
        nn.BatchNorm2d(inp),
        nn.ReLU(inplace=True),
        nn.Conv2d(inp, oup, 1, 1, 0, bias=False),
        nn.BatchNorm2d(oup),
        nn.ReLU(inplace=True),
    )


class Model(nn.Module):
    def __init__(self, num_classes=1000, input_channels=3, alpha=1.0):
        super().__init__()
        layers = [conv_bn(input_channels, int(32 * alpha), 2)]
        channels = int(32 * alpha)
        for width_, stride in SEPARABLE_LAYERS:
            layers.append(conv_dw(channels, int(width_ * alpha), stride))
            channels = int(width_ * alpha)
        # The published 7x7 average pool: global pooling of the 7x7 map a 224x224 input gives.
        layers.append(nn.AvgPool2d(7))
        self.model = nn.Sequential(*layers)
        self.fc = nn.Linear(int(1024 * alpha), num_classes)

    def forward(self, x):
        x = self.model(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)


def get_inputs():
    return [torch.randn(batch_size, input_channels, height, width)]


def get_init_inputs():
    return [num_classes, input_channels, alpha]


SMALL = {"batch_size": 2}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
}
EXCLUDE = None
