"""KernelBench L3 14: a DenseNet dense block: each layer sees the concatenation of all before it."""
import torch
import torch.nn as nn

batch_size = 10
num_layers = 6
num_input_features = 32
growth_rate = 32
height, width = 224, 224


class Model(nn.Module):
    """Layer i: BN, ReLU, 3x3 conv to growth_rate channels, Dropout(0), on the concatenation of
    the input and all earlier layers' outputs (num_input + i * growth channels).

    KernelBench's dense layer is the plain (non-bottleneck) form: no 1x1 conv before the 3x3.
    """

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


def get_inputs():
    return [torch.randn(batch_size, num_input_features, height, width)]


def get_init_inputs():
    return [num_layers, num_input_features, growth_rate]


SMALL = {"batch_size": 2, "height": 32, "width": 32}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
    "dropout": "each dense layer's dropout has p=0.0: a train-mode mask would differ between "
               "reference and candidate",
}
EXCLUDE = None
