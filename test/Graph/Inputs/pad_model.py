"""A model whose training step pads (forward: positive pads, with a value;
backward: negative pads, cropping), for checking the constant_pad_nd spec
of specs/onnx.tdl against PyTorch (test/Graph/onnx-specs.test)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Pad(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4, 4))

    def forward(self, x):
        y = F.pad(x @ self.w, (1, 2, 3, 0), value=0.5)
        z = F.pad(x @ self.w, (2, 1))
        return y.sum() + z.sum()
