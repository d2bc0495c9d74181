"""KernelBench L3 15: DenseNet-121 layout (Huang et al. 2016): dense blocks of 6, 12, 24, 16 layers.

As in KernelBench, dense layers are the plain BN-ReLU-3x3 form (no 1x1 bottleneck), and each
transition halves the channels; the published parameter count therefore does not apply.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 10
num_classes = 10
height, width = 224, 224

BLOCK_LAYERS = [6, 12, 24, 16]


class DenseBlock(nn.Module):
    def __init__(self, num_layers, num_input_features, growth_rate):
        super().__init__()
        self.layers = nn.ModuleList(
            self._make_layer(num_input_features + i * growth_rate, growth_rate)
            for i in range(num_layers)
        )

    @staticmethod
    def _make_layer(in_features, growth_rate):
        return nn.Sequential(
            nn.BatchNorm2d(in_features),
            nn.ReLU(inplace=True),
            nn.Conv2d(in_features, growth_rate, kernel_size=3, padding=1, bias=False),
            nn.Dropout(0.0),
        )

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            features.append(layer(x))
            x = torch.cat(features, 1)
        return x


class TransitionLayer(nn.Module):
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


class Model(nn.Module):
    def __init__(self, growth_rate=32, num_classes=1000):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2, padding=1),
        )
        self.dense_blocks = nn.ModuleList()
        self.transition_layers = nn.ModuleList()
        channels = 64
        for i, num_layers in enumerate(BLOCK_LAYERS):
            self.dense_blocks.append(DenseBlock(num_layers, channels, growth_rate))
            channels += num_layers * growth_rate
            if i != len(BLOCK_LAYERS) - 1:
                self.transition_layers.append(TransitionLayer(channels, channels // 2))
                channels //= 2
        self.final_bn = nn.BatchNorm2d(channels)
        self.classifier = nn.Linear(channels, num_classes)

    def forward(self, x):
        x = self.features(x)
        for i, block in enumerate(self.dense_blocks):
            x = block(x)
            if i != len(self.dense_blocks) - 1:
                x = self.transition_layers[i](x)
        x = F.relu(self.final_bn(x), inplace=True)
        x = F.adaptive_avg_pool2d(x, (1, 1)).view(x.size(0), -1)
        return self.classifier(x)


def get_inputs():
    return [torch.randn(batch_size, 3, height, width)]


def get_init_inputs():
    return [32, num_classes]


SMALL = {"batch_size": 2, "height": 64, "width": 64}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
    "dropout": "each dense layer's dropout has p=0.0: a train-mode mask would differ between "
               "reference and candidate",
}
EXCLUDE = None
