"""KernelBench L3 24: EfficientNet-B2 layout: stem, five MBConv stages, 1x1 head to 1408 channels.

Faithful to the KernelBench definition, which differs from the published network: each stage is a
single Sequential in which the squeeze-and-excitation layers (global pool, 1x1 reduce, ReLU,
1x1 expand, sigmoid) are applied in series instead of as a channel gate, so every stage after the
first runs on a 1x1 feature map. Kept as is so that results stay comparable with KernelBench.
"""
import torch
import torch.nn as nn

batch_size = 2
num_classes = 1000
image_size = 224


def make_mbconv_block(in_channels, out_channels, stride, expand_ratio):
    expanded = in_channels * expand_ratio
    layers = []
    if expand_ratio != 1:
        layers += [nn.Conv2d(in_channels, expanded, kernel_size=1, stride=1, padding=0, bias=False),
                   nn.BatchNorm2d(expanded), nn.ReLU(inplace=True)]
    layers += [
        nn.Conv2d(expanded, expanded, kernel_size=3, stride=stride, padding=1, groups=expanded,
                  bias=False),
        nn.BatchNorm2d(expanded),
        nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d((1, 1)),
        nn.Conv2d(expanded, expanded // 4, kernel_size=1, stride=1, padding=0, bias=False),
        nn.ReLU(inplace=True),
        nn.Conv2d(expanded // 4, expanded, kernel_size=1, stride=1, padding=0, bias=False),
        nn.Sigmoid(),
        nn.Conv2d(expanded, out_channels, kernel_size=1, stride=1, padding=0, bias=False),
        nn.BatchNorm2d(out_channels),
    ]
    return nn.Sequential(*layers)


class Model(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, kernel_size=3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.relu = nn.ReLU(inplace=True)
        self.mbconv1 = make_mbconv_block(32, 96, 1, 3)
        self.mbconv2 = make_mbconv_block(96, 144, 2, 6)
        self.mbconv3 = make_mbconv_block(144, 192, 2, 6)
        self.mbconv4 = make_mbconv_block(192, 288, 2, 6)
        self.mbconv5 = make_mbconv_block(288, 384, 1, 6)
        self.conv_final = nn.Conv2d(384, 1408, kernel_size=1, stride=1, padding=0, bias=False)
        self.bn_final = nn.BatchNorm2d(1408)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(1408, num_classes)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        for stage in (self.mbconv1, self.mbconv2, self.mbconv3, self.mbconv4, self.mbconv5):
            x = stage(x)
        x = self.relu(self.bn_final(self.conv_final(x)))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [num_classes]


SMALL = {"batch_size": 2, "image_size": 64}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
}
EXCLUDE = ("ill-conditioned at its KernelBench size: the serial squeeze-excitation collapses every "
           "feature map to 1x1 after the first stage, so training-mode BatchNorm normalises only "
           "batch_size = 2 values per channel and amplifies rounding; fp32 and fp64 references "
           "differ by ~1 (far above the 1e-4 tolerance), so correct candidates fail at random. "
           "Running the BatchNorms in eval mode, or a larger batch, would make it judgeable")
