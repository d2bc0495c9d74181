"""KernelBench L3 27: a RegNet-style stack: per stage two 3x3 conv + BN + ReLU and a 2x2 max pool,
then global average pooling and a linear classifier."""
import torch
import torch.nn as nn

batch_size = 8
input_channels = 3
image_height, image_width = 224, 224
stages = 3
block_widths = [64, 128, 256]
output_classes = 10


class Model(nn.Module):
    def __init__(self, input_channels, stages, block_widths, output_classes):
        super().__init__()
        self.stages = stages
        self.block_widths = block_widths
        layers, channels = [], input_channels
        for i in range(stages):
            layers.append(self._make_stage(channels, block_widths[i]))
            channels = block_widths[i]
        self.feature_extractor = nn.Sequential(*layers)
        self.fc = nn.Linear(block_widths[-1], output_classes)

    @staticmethod
    def _make_stage(in_channels, out_channels):
        return nn.Sequential(
            nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.Conv2d(out_channels, out_channels, kernel_size=3, padding=1),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=2),
        )

    def forward(self, x):
        x = self.feature_extractor(x)
        x = torch.mean(x, dim=[2, 3])  # global average pooling
        return self.fc(x)


def get_inputs():
    return [torch.randn(batch_size, input_channels, image_height, image_width)]


def get_init_inputs():
    return [input_channels, stages, block_widths, output_classes]


SMALL = {"batch_size": 2, "image_height": 32, "image_width": 32}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
}
EXCLUDE = None
