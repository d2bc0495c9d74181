"""KernelBench L3 12: VGG-19 (Simonyan & Zisserman 2014, configuration E)."""
import torch
import torch.nn as nn

batch_size = 10
num_classes = 1000
image_size = 224  # the published network expects 224x224; the classifier width follows from it

# Output channels of each 3x3 convolution; "M" is a 2x2 max pool.
CONFIG = [64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
          512, 512, 512, 512, "M"]


def make_features(config):
    layers, channels = [], 3
    for item in config:
        if item == "M":
            layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
        else:
            layers += [nn.Conv2d(channels, item, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            channels = item
    return nn.Sequential(*layers)


class Model(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.features = make_features(CONFIG)
        side = image_size // 32  # five 2x2 pools: 7 at 224
        self.classifier = nn.Sequential(
            nn.Linear(512 * side * side, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(p=0.0),
            nn.Linear(4096, 4096),
            nn.ReLU(inplace=True),
            nn.Dropout(p=0.0),
            nn.Linear(4096, num_classes),
        )
        self._init_weights()

    def _init_weights(self):
        """He initialisation (fan_in, zero biases): every layer keeps the signal's scale.

        PyTorch's default init shrinks the signal about sixfold in variance per layer in a network
        without normalisation, so the input's effect on the output fell below tolerance and any
        input produced the same output. The last layer has no ReLU after it, so gain 1.
        """
        layers = [m for m in self.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
        for m in layers:
            gain = "linear" if m is layers[-1] else "relu"
            nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity=gain)
            nn.init.zeros_(m.bias)

    def forward(self, x):
        x = torch.flatten(self.features(x), 1)
        return self.classifier(x)


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [num_classes]


SMALL = {"batch_size": 2, "image_size": 32}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
    "dropout": "both classifier dropouts have p=0.0 (published VGG uses 0.5): a train-mode mask "
               "would differ between reference and candidate",
    "degenerate_output": "weights use He initialisation (fan_in, zero biases); with PyTorch's "
                         "default init every sample's output equalled the batch mean at 1e-4",
}
EXCLUDE = None
