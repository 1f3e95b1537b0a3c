"""Small training steps on which the recursive search is compared with the
exact optimum (test/Plan/small-graphs.test)."""

import torch
import torch.nn as nn


class ConvResidual(nn.Module):
    """Two 3x3 convolutions with a residual connection, then a classifier."""

    def __init__(self, channels=8, size=8, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.fc = nn.Linear(channels * size * size, classes)

    def forward(self, x):
        y = self.conv2(torch.relu(self.conv1(x)))
        y = torch.relu(y + x)
        return self.fc(torch.flatten(y, 1))


class LSTMCellStep(nn.Module):
    """One LSTM cell step written out: four gates, each from the input and
    the previous hidden state (here a function of the input)."""

    def __init__(self, width=64, classes=10):
        super().__init__()
        self.state = nn.Linear(width, width)
        self.ih = nn.ModuleList(nn.Linear(width, width) for _ in range(4))
        self.hh = nn.ModuleList(nn.Linear(width, width, bias=False)
                                for _ in range(4))
        self.out = nn.Linear(width, classes)

    def forward(self, x):
        h0 = torch.tanh(self.state(x))
        i, f, g, o = (ih(x) + hh(h0) for ih, hh in zip(self.ih, self.hh))
        c = torch.sigmoid(f) * h0 + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return self.out(h)


class Attention(nn.Module):
    """Single-head self-attention block with an output projection."""

    def __init__(self, width=32, tokens=16, classes=10):
        super().__init__()
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, width)
        self.v = nn.Linear(width, width)
        self.proj = nn.Linear(width * tokens, classes)
        self.scale = width ** -0.5

    def forward(self, x):
        scores = torch.bmm(self.q(x), self.k(x).transpose(1, 2)) * self.scale
        y = torch.bmm(torch.softmax(scores, dim=-1), self.v(x))
        return self.proj(torch.flatten(y, 1))
