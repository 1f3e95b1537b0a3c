"""The models of the digits example, over the 8x8 images of scikit-learn's
digits data set (64 pixels, 10 classes): a two-layer perceptron and a small
convolutional network.

examples/digits/mlp.json and cnn.json are their training steps
(cross-entropy, SGD with learning rate 0.1, batches of 100), exported from
the repository root with

    build/bin/tofu-export examples/digits/model.py:MLP --input 100x64 \\
        --loss ce --lr 0.1 -o examples/digits/mlp.json
    build/bin/tofu-export examples/digits/model.py:CNN --input 100x1x8x8 \\
        --loss ce --lr 0.1 -o examples/digits/cnn.json
"""

import torch
import torch.nn as nn


class MLP(nn.Module):
    """x[B, 64] -> Linear(64, 128) -> ReLU -> Linear(128, 10)."""

    def __init__(self, pixels=64, hidden=128, classes=10):
        super().__init__()
        self.fc1 = nn.Linear(pixels, hidden)
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class CNN(nn.Module):
    """x[B, 1, 8, 8] -> Conv2d(1, 8, 3, padding=1) -> ReLU -> flatten ->
    Linear(512, 10)."""

    def __init__(self, channels=8, classes=10):
        super().__init__()
        self.conv = nn.Conv2d(1, channels, 3, padding=1)
        self.fc = nn.Linear(channels * 64, classes)

    def forward(self, x):
        return self.fc(torch.relu(self.conv(x)).flatten(1))
