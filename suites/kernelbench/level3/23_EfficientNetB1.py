"""KernelBench L3 23: EfficientNet-B1 layout at 240x240: stem, seven MBConv stages, 1x1 head.

As in KernelBench, each stage is a single MBConv (1x1 expand, 3x3 depthwise, 1x1 project, ReLU6,
no squeeze-and-excitation, no residual), so the published parameter count does not apply.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 10
image_size = 240
input_shape = (3, image_size, image_size)
num_classes = 1000


def make_mbconv_block(in_channels, out_channels, stride, expand_ratio):
    hidden = round(in_channels * expand_ratio)
    return nn.Sequential(
        nn.Conv2d(in_channels, hidden, kernel_size=1, stride=1, padding=0, bias=False),
        nn.BatchNorm2d(hidden),
        nn.ReLU6(inplace=True),
        nn.Conv2d(hidden, hidden, kernel_size=3, stride=stride, padding=1, groups=hidden,
                  bias=False),
        nn.BatchNorm2d(hidden),
        nn.ReLU6(inplace=True),
        nn.Conv2d(hidden, out_channels, kernel_size=1, stride=1, padding=0, bias=False),
        nn.BatchNorm2d(out_channels),
    )


class Model(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, kernel_size=3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(32)
        self.mbconv1 = make_mbconv_block(32, 16, 1, 1)
        self.mbconv2 = make_mbconv_block(16, 24, 2, 6)
        self.mbconv3 = make_mbconv_block(24, 40, 2, 6)
        self.mbconv4 = make_mbconv_block(40, 80, 2, 6)
        self.mbconv5 = make_mbconv_block(80, 112, 1, 6)
        self.mbconv6 = make_mbconv_block(112, 192, 2, 6)
        self.mbconv7 = make_mbconv_block(192, 320, 1, 6)
        self.conv2 = nn.Conv2d(320, 1280, kernel_size=1, stride=1, padding=0, bias=False)
        self.bn2 = nn.BatchNorm2d(1280)
        self.fc = nn.Linear(1280, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        for stage in (self.mbconv1, self.mbconv2, self.mbconv3, self.mbconv4, self.mbconv5,
                      self.mbconv6, self.mbconv7):
            x = stage(x)
        x = F.relu(self.bn2(self.conv2(x)))
        x = torch.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1)
        return self.fc(x)


def get_inputs():
    return [torch.randn(batch_size, *input_shape)]


def get_init_inputs():
    return [num_classes]


SMALL = {"batch_size": 2, "image_size": 64}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
}
EXCLUDE = None
