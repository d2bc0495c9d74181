"""KernelBench L3 5: AlexNet (Krizhevsky et al. 2012, single-tower: 96-256-384-384-256 filters)."""
import torch
import torch.nn as nn

batch_size = 1024
num_classes = 1000
image_size = 224  # the published network expects 224x224; the classifier width follows from it


def _feature_side(side):
    """Spatial side after the conv/pool stack: conv1 (k11 s4 p2) and three 3x3/2 max pools."""
    side = (side + 2 * 2 - 11) // 4 + 1
    for _ in range(3):
        side = (side - 3) // 2 + 1
    return side


class Model(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 96, kernel_size=11, stride=4, padding=2)
        self.relu1 = nn.ReLU(inplace=True)
        self.maxpool1 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.conv2 = nn.Conv2d(96, 256, kernel_size=5, padding=2)
        self.relu2 = nn.ReLU(inplace=True)
        self.maxpool2 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.conv3 = nn.Conv2d(256, 384, kernel_size=3, padding=1)
        self.relu3 = nn.ReLU(inplace=True)
        self.conv4 = nn.Conv2d(384, 384, kernel_size=3, padding=1)
        self.relu4 = nn.ReLU(inplace=True)
        self.conv5 = nn.Conv2d(384, 256, kernel_size=3, padding=1)
        self.relu5 = nn.ReLU(inplace=True)
        self.maxpool3 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.fc1 = nn.Linear(256 * _feature_side(image_size) ** 2, 4096)  # 256*6*6 at 224
        self.relu6 = nn.ReLU(inplace=True)
        self.dropout1 = nn.Dropout(p=0.0)
        self.fc2 = nn.Linear(4096, 4096)
        self.relu7 = nn.ReLU(inplace=True)
        self.dropout2 = nn.Dropout(p=0.0)
        self.fc3 = nn.Linear(4096, num_classes)
        self._init_weights()

    def _init_weights(self):
        """He initialisation (fan_in, zero biases): every layer keeps the signal's scale.

        PyTorch's default init shrinks the signal about sixfold in variance per layer in a network
        without normalisation, so the input's effect on the output fell below the fp16/bf16
        tolerance. The last layer has no ReLU after it, so gain 1.
        """
        layers = [m for m in self.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
        for m in layers:
            gain = "linear" if m is layers[-1] else "relu"
            nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity=gain)
            nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.maxpool1(self.relu1(self.conv1(x)))
        x = self.maxpool2(self.relu2(self.conv2(x)))
        x = self.relu3(self.conv3(x))
        x = self.relu4(self.conv4(x))
        x = self.maxpool3(self.relu5(self.conv5(x)))
        x = torch.flatten(x, 1)
        x = self.dropout1(self.relu6(self.fc1(x)))
        x = self.dropout2(self.relu7(self.fc2(x)))
        return self.fc3(x)


def get_inputs():
    return [torch.randn(batch_size, 3, image_size, image_size)]


def get_init_inputs():
    return [num_classes]


SMALL = {"batch_size": 2, "image_size": 64}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
    "dropout": "both classifier dropouts have p=0.0 (published AlexNet uses 0.5): a train-mode "
               "mask would differ between reference and candidate",
    "degenerate_output": "weights use He initialisation (fan_in, zero biases); with PyTorch's "
                         "default init every sample's output equalled the batch mean within 1e-2",
}
EXCLUDE = None
