"""A model whose training step uses the operator-library specs that the
default check models (MLP, RNN, GPT, ResNet-18) do not: a convolution with a
bias, adaptive average pooling to a size that does and one that does not
divide the input, the tanh GELU, negation, subtracting a number, a full sum
and dropout (bernoulli, opaque)."""

import torch
import torch.nn as nn


class LibraryOps(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1, bias=True)
        self.uneven = nn.AdaptiveAvgPool2d((3, 2))
        self.even = nn.AdaptiveAvgPool2d((1, 1))
        self.gelu = nn.GELU(approximate="tanh")
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        h = self.gelu(self.conv(x))
        a = self.uneven(h)
        b = self.even(-h)
        return (a - 1.0).sum() + self.drop(b).sum()
