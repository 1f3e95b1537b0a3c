"""The source of models/mlp.json: a two-layer perceptron."""

import torch
import torch.nn as nn


class MLP(nn.Module):
    """x[B, 1024] -> Linear(1024, 4096) -> ReLU -> Linear(4096, 10)."""

    def __init__(self, width=1024, hidden=4096, out=10):
        super().__init__()
        self.fc1 = nn.Linear(width, hidden)
        self.fc2 = nn.Linear(hidden, out)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))
