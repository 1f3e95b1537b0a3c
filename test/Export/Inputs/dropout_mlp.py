"""An MLP that trains with dropout (p = 0.1 after each hidden layer), for
test/Export/dropout.test: its masks are the graph's random ops."""

import torch.nn as nn


class DropoutMLP(nn.Module):
    def __init__(self, d=32, h=64, classes=10, p=0.1):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.drop1 = nn.Dropout(p)
        self.fc2 = nn.Linear(h, h)
        self.drop2 = nn.Dropout(p)
        self.fc3 = nn.Linear(h, classes)

    def forward(self, x):
        x = self.drop1(self.fc1(x).relu())
        x = self.drop2(self.fc2(x).relu())
        return self.fc3(x)


class EvalDropoutMLP(DropoutMLP):
    """The same MLP put in eval mode by its constructor: no dropout."""

    def __init__(self):
        super().__init__()
        self.eval()
