"""A model whose training step uses nn.MaxUnpool1d, 2d and 3d after the max
poolings whose indices they read: max_unpool2d (1-d goes through it on a
unit-width plane), max_unpool3d and the gather their backward records.
Input [2, 4, 6, 6]."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class UnpoolOps(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, 6))

    def forward(self, x):
        x = x * self.scale
        y, i = F.max_pool2d(x, 2, return_indices=True)
        total = (F.max_unpool2d(y, i, 2) ** 2).sum()
        line = x.flatten(2)  # [2, 4, 36]
        y1, i1 = F.max_pool1d(line, 3, return_indices=True)
        total = total + (F.max_unpool1d(y1, i1, 3) ** 2).sum()
        vol = x.reshape(2, 1, 4, 6, 6)
        y3, i3 = F.max_pool3d(vol, 2, return_indices=True)
        return total + (F.max_unpool3d(y3, i3, 2) * vol).sum()
