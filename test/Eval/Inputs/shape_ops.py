"""A model whose training step uses the rank 5 and 6 view ops of
specs/shape_ranks.tdl and the concatenations, stacks and unbinds along dims
2 and 3 (video models' [N, C, T, H, W] tensors, MViT's attention heads,
WaveRNN's upsampling): every transpose_int pair of a rank-5 tensor,
unsqueeze at dims 3 and 4 with the expand and squeeze_dim its backward
records, expand of rank 5, cat along dims 2 and 3, stack along dim 2 and
unbind along dims 2 and 3. Input [2, 3, 4, 2, 5]."""

import torch
import torch.nn as nn


class ShapeOps(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, 5))

    def forward(self, x):
        x = x * self.scale
        total = 0.0
        for i in range(5):
            for j in range(i + 1, 5):
                total = total + (x.transpose(i, j) * (i + 2 * j)).sum()
        flat = x.flatten(3)  # [2, 3, 4, 10]
        up = flat.unsqueeze(3).expand(2, 3, 4, 2, 10)  # WaveRNN's stretch
        total = total + (up * up).sum()
        pooled = x.mean((2, 3, 4), keepdim=True).expand(2, 3, 4, 2, 5)
        total = total + (pooled * x).sum()
        deep = x.unsqueeze(4)  # [2, 3, 4, 2, 1, 5]
        total = total + (deep.squeeze(4) * x).sum()
        total = total + torch.cat([x, x * 2], dim=2).pow(2).sum()
        total = total + torch.cat([x[:, :, :, :1], x], dim=3).pow(2).sum()
        total = total + torch.stack([flat, flat * 3], dim=2).pow(2).sum()
        a, b, c, d = x.unbind(2)
        total = total + (a * b - c * d).sum()
        p, q = x.unbind(3)
        return total + (p * q).sum()
