"""A model whose training step uses what a `lengths` padding mask and
nn.MultiheadAttention with a key padding mask record (torchaudio's
Conformer): arange, ge/gt/le/lt.Tensor against the lengths, and baddbmm
with a broadcast bias. Inputs: x [2, 6, 4] and lengths [2] given as values
(`--input 'lengths=2:i64=[6,4]'`)."""

import torch
import torch.nn as nn


class MaskOps(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.linspace(-1.0, 1.0, 16).reshape(4, 4))

    def forward(self, x, lengths):
        steps = torch.arange(x.shape[1], device=lengths.device)  # [6]
        pad = steps[None, :] >= lengths[:, None]  # [2, 6]
        keep = (steps[None, :] < lengths[:, None]).float()
        edge = (steps[None, :] <= lengths[:, None]).float() + \
            (steps[None, :] > lengths[:, None]).float()
        h = x @ self.w  # [2, 6, 4]
        bias = torch.where(pad, -1.0, 0.0)[:, None, :]  # [2, 1, 6]
        scores = torch.baddbmm(bias, h, h.transpose(1, 2), beta=0.5,
                               alpha=0.25)  # [2, 6, 6]
        return (scores * scores).sum() + (h.sum(2) * keep * edge).sum()
