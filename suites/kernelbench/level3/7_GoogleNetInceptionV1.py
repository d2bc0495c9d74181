"""KernelBench L3 7: GoogLeNet / Inception v1 (Szegedy et al. 2014), without auxiliary heads."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 10
input_channels = 3
height = 224
width = 224
num_classes = 1000


class InceptionModule(nn.Module):
    """Four parallel branches concatenated on channels (no activations, as in KernelBench)."""

    def __init__(self, in_channels, out_1x1, reduce_3x3, out_3x3, reduce_5x5, out_5x5, pool_proj):
        super().__init__()
        self.branch1x1 = nn.Conv2d(in_channels, out_1x1, kernel_size=1)
        self.branch3x3 = nn.Sequential(
            nn.Conv2d(in_channels, reduce_3x3, kernel_size=1),
            nn.Conv2d(reduce_3x3, out_3x3, kernel_size=3, padding=1),
        )
        self.branch5x5 = nn.Sequential(
            nn.Conv2d(in_channels, reduce_5x5, kernel_size=1),
            nn.Conv2d(reduce_5x5, out_5x5, kernel_size=5, padding=2),
        )
        self.branch_pool = nn.Sequential(
            nn.MaxPool2d(kernel_size=3, stride=1, padding=1),
            nn.Conv2d(in_channels, pool_proj, kernel_size=1),
        )

    def forward(self, x):
        branches = [self.branch1x1(x), self.branch3x3(x), self.branch5x5(x), self.branch_pool(x)]
        return torch.cat(branches, 1)


class Model(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3)
        self.maxpool1 = nn.MaxPool2d(3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(64, 64, kernel_size=1)
        self.conv3 = nn.Conv2d(64, 192, kernel_size=3, padding=1)
        self.maxpool2 = nn.MaxPool2d(3, stride=2, padding=1)
        # Widths from the paper's Table 1: (in, 1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool proj).
        self.inception3a = InceptionModule(192, 64, 96, 128, 16, 32, 32)
        self.inception3b = InceptionModule(256, 128, 128, 192, 32, 96, 64)
        self.maxpool3 = nn.MaxPool2d(3, stride=2, padding=1)
        self.inception4a = InceptionModule(480, 192, 96, 208, 16, 48, 64)
        self.inception4b = InceptionModule(512, 160, 112, 224, 24, 64, 64)
        self.inception4c = InceptionModule(512, 128, 128, 256, 24, 64, 64)
        self.inception4d = InceptionModule(512, 112, 144, 288, 32, 64, 64)
        self.inception4e = InceptionModule(528, 256, 160, 320, 32, 128, 128)
        self.maxpool4 = nn.MaxPool2d(3, stride=2, padding=1)
        self.inception5a = InceptionModule(832, 256, 160, 320, 32, 128, 128)
        self.inception5b = InceptionModule(832, 384, 192, 384, 48, 128, 128)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(0.0)
        self.fc = nn.Linear(1024, num_classes)
        self._init_weights()

    def _init_weights(self):
        """He initialisation (fan_in, zero biases), so the signal keeps its scale.

        Gain sqrt(2) for the stem convolutions, which feed a ReLU, and 1 elsewhere: the inception
        branches have no activation. PyTorch's default init shrank the signal layer by layer
        until every sample's output equalled the batch mean within 1e-4.
        """
        stem = {self.conv1, self.conv2, self.conv3}
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                gain = "relu" if m in stem else "linear"
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity=gain)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.maxpool1(F.relu(self.conv1(x)))
        x = F.relu(self.conv2(x))
        x = self.maxpool2(F.relu(self.conv3(x)))
        x = self.maxpool3(self.inception3b(self.inception3a(x)))
        for block in (self.inception4a, self.inception4b, self.inception4c, self.inception4d,
                      self.inception4e):
            x = block(x)
        x = self.maxpool4(x)
        x = self.inception5b(self.inception5a(x))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(self.dropout(x))


def get_inputs():
    return [torch.randn(batch_size, input_channels, height, width)]


def get_init_inputs():
    return [num_classes]


SMALL = {"batch_size": 2, "height": 64, "width": 64}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
    "dropout": "the classifier dropout has p=0.0 (the paper uses 0.4): a train-mode mask would "
               "differ between reference and candidate",
    "degenerate_output": "weights use He initialisation (fan_in, zero biases); with PyTorch's "
                         "default init every sample's output equalled the batch mean at 1e-4",
}
EXCLUDE = None
