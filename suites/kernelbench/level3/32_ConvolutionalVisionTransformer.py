"""KernelBench L3 32: a convolutional vision transformer: a strided conv patch embedding flattened
into one token by a linear projection, a class token, six transformer encoder layers, and a
linear classifier on the class token."""
import torch
import torch.nn as nn

batch_size = 10
image_size = 32
embed_dim = 128
in_channels = 3
num_heads = 4
num_classes = 1000


class Model(nn.Module):
    def __init__(self, num_classes, embed_dim=512, num_heads=8, num_layers=6, mlp_ratio=4.0,
                 patch_size=4, in_channels=3, image_size=32):
        super().__init__()
        self.patch_size = patch_size
        self.image_size = image_size
        self.embed_dim = embed_dim
        self.conv1 = nn.Conv2d(in_channels, embed_dim, kernel_size=patch_size, stride=patch_size)
        num_patches = (image_size // patch_size) ** 2
        self.linear_proj = nn.Linear(embed_dim * num_patches, embed_dim)
        self.transformer_layers = nn.ModuleList(
            nn.TransformerEncoderLayer(d_model=embed_dim, nhead=num_heads,
                                       dim_feedforward=int(embed_dim * mlp_ratio), dropout=0.0,
                                       batch_first=True)
            for _ in range(num_layers)
        )
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.fc_out = nn.Linear(embed_dim, num_classes)

    def forward(self, x):
        b = x.size(0)
        x = self.linear_proj(self.conv1(x).flatten(start_dim=1))  # (B, embed_dim)
        x = torch.cat((self.cls_token.expand(b, -1, -1), x.unsqueeze(1)), dim=1)  # (B, 2, embed)
        for layer in self.transformer_layers:
            x = layer(x)
        return self.fc_out(x[:, 0])


def get_inputs():
    return [torch.randn(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [num_classes, embed_dim, num_heads]


# image_size stays 32: the constructor's own image_size default (32) sizes linear_proj.
SMALL = {"batch_size": 4}
FIXES = {
    "input_distribution": "torch.randn inputs instead of torch.rand: signed inputs with spread",
    "dropout": "the encoder layers' dropout is 0.0: a train-mode mask would differ between "
               "reference and candidate",
}
EXCLUDE = None
