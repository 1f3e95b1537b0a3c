"""The model of the digits example: a two-layer perceptron over the 8x8
images of scikit-learn's digits data set (64 pixels, 10 classes).

examples/digits/mlp.json is its training step (cross-entropy, SGD with
learning rate 0.1, batches of 100), exported from the repository root with

    build/bin/tofu-export examples/digits/model.py:MLP --input 100x64 \\
        --loss ce --lr 0.1 -o examples/digits/mlp.json
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
