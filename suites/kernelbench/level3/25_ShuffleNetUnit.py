"""KernelBench L3 25: one ShuffleNet unit (Zhang et al. 2017): group 1x1 conv, channel shuffle,
depthwise 3x3, group 1x1 conv, with a projection shortcut when the widths differ."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 10
input_channels = 240
out_channels = 480
groups = 3
height = 224
width = 224
num_classes = 1000  # unused by the unit; kept from the KernelBench definition


class ChannelShuffle(nn.Module):
    """Interleave channels across groups: (B, g, C/g, H, W) -> transpose -> (B, C, H, W)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, x):
        b, c, h, w = x.size()
        x = x.view(b, self.groups, c // self.groups, h, w).transpose(1, 2).contiguous()
        return x.view(b, -1, h, w)


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, groups=3):
        super().__init__()
        assert out_channels % 4 == 0, "out_channels must be a multiple of 4 (bottleneck = out/4)"
        mid = out_channels // 4
        self.conv1 = nn.Conv2d(in_channels, mid, kernel_size=1, groups=groups, bias=False)
        self.bn1 = nn.BatchNorm2d(mid)
        self.conv2 = nn.Conv2d(mid, mid, kernel_size=3, padding=1, groups=mid, bias=False)
        self.bn2 = nn.BatchNorm2d(mid)
        self.conv3 = nn.Conv2d(mid, out_channels, kernel_size=1, groups=groups, bias=False)
        self.bn3 = nn.BatchNorm2d(out_channels)
        self.shuffle = ChannelShuffle(groups)
        if in_channels == out_channels:
            self.shortcut = nn.Sequential()
        else:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_channels, out_channels, kernel_size=1, bias=False),
                nn.BatchNorm2d(out_channels),
            )

    def forward(self, x):
        # KernelBench's order: the shuffle follows the depthwise conv.
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.shuffle(self.bn2(self.conv2(out)))
        out = F.relu(self.bn3(self.conv3(out)))
        return out + self.shortcut(x)


def get_inputs():
    return [torch.randn(batch_size, input_channels, height, width)]


def get_init_inputs():
    return [input_channels, out_channels, groups]


SMALL = {"batch_size": 2, "height": 32, "width": 32}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
}
EXCLUDE = None
