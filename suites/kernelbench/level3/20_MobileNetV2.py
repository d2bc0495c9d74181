"""KernelBench L3 20: MobileNet v2 (Sandler et al. 2018): inverted residual blocks, width 1.0.

As in KernelBench, the blocks are plain Sequentials: the residual connection of stride-1,
equal-width blocks is not applied.
"""
import torch
import torch.nn as nn

batch_size = 10
num_classes = 1000
image_size = 224

# t (expansion), c (output channels), n (repeats), s (stride of the first repeat)
INVERTED_RESIDUAL_SETTING = [
    [1, 16, 1, 1],
    [6, 24, 2, 2],
    [6, 32, 3, 2],
    [6, 64, 4, 2],
    [6, 96, 3, 1],
    [6, 160, 3, 2],
    [6, 320, 1, 1],
]


def make_divisible(value, divisor, min_value=None):
    """Round a channel count to a multiple of divisor without dropping more than 10%."""
    min_value = divisor if min_value is None else min_value
    rounded = max(min_value, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def inverted_residual(inp, oup, stride, expand_ratio):
    """1x1 expand (skipped when t == 1), 3x3 depthwise, 1x1 linear projection."""
    hidden = int(inp * expand_ratio)
    layers = []
    if expand_ratio != 1:
        layers += [nn.Conv2d(inp, hidden, 1, 1, 0, bias=False), nn.BatchNorm2d(hidden),
                   nn.ReLU6(inplace=True)]
    layers += [
        nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
        nn.BatchNorm2d(hidden),
        nn.ReLU6(inplace=True),
        nn.Conv2d(hidden, oup, 1, 1, 0, bias=False),
        nn.BatchNorm2d(oup),
    ]
    return nn.Sequential(*layers)


class Model(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        channels, last_channel = 32, 1280
        features = [nn.Conv2d(3, channels, 3, 2, 1, bias=False), nn.BatchNorm2d(channels),
                    nn.ReLU6(inplace=True)]
        for t, c, n, s in INVERTED_RESIDUAL_SETTING:
            out = make_divisible(c, 8)
            for i in range(n):
                features.append(inverted_residual(channels, out, s if i == 0 else 1, t))
                channels = out
        features += [nn.Conv2d(channels, last_channel, 1, 1, 0, bias=False),
                     nn.BatchNorm2d(last_channel), nn.ReLU6(inplace=True),
                     nn.AdaptiveAvgPool2d((1, 1))]
        self.features = nn.Sequential(*features)
        self.classifier = nn.Sequential(nn.Dropout(0.0), nn.Linear(last_channel, num_classes))
        self._init_weights()

    def _init_weights(self):
        """The published initialisation: He (fan_out) convs, unit BN, N(0, 0.01) classifier."""
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.features(x)
        x = x.view(x.size(0), -1)
        return self.classifier(x)


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [num_classes]


SMALL = {"batch_size": 2, "image_size": 128}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
    "dropout": "the classifier dropout has p=0.0 (published MobileNetV2 uses 0.2): a train-mode "
               "mask would differ between reference and candidate",
}
EXCLUDE = None
