"""A model whose training step updates slices of attention tensors in place
as MViT v2 does (`attn[:, :, 1:, 1:] += rel_pos`, `x[:, :, 1:, :] +=
q[:, :, 1:, :]`) with relative-position terms read from a table by a
[q, k] distance matrix: slice_scatter along dims 2 and 3 (the forward's
functionalized updates), as_strided and as_strided_scatter (autograd's
backward of the updates, over the contiguous form of the gradient) and
index_put with a rank-2 index (the table's gradient). Input [2, 9, 4]: a
class token and 8 tokens of 4 channels, 2 heads."""

import torch
import torch.nn as nn


class RelPosOps(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(4, 4)
        self.table = nn.Parameter(torch.linspace(-1.0, 1.0, 30).view(15, 2))

    def forward(self, x):
        b, n, _ = x.shape
        q = self.q(x).view(b, n, 2, 2).transpose(1, 2)  # [b, 2, 9, 2]
        attn = q @ q.transpose(2, 3)  # [b, 2, 9, 9]
        pos = torch.arange(n - 1, device=x.device)
        dist = pos[:, None] - pos[None, :] + (n - 2)  # in [0, 15)
        rel = self.table[dist]  # [8, 8, 2]
        bias = (q[:, :, 1:, None, :] * rel).sum(-1)  # [b, 2, 8, 8]
        attn[:, :, 1:, 1:] += bias
        out = attn.softmax(-1) @ q  # [b, 2, 9, 2]
        out[:, :, 1:, :] += q[:, :, 1:, :]
        y = out.transpose(1, 2).reshape(b, n, 4)
        return (y * y).sum()
