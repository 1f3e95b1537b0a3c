"""A model whose training step updates slices of attention tensors in place
as MViT v2 does (`attn[:, :, 1:, 1:] += rel_pos`, `x[:, :, 1:, :] +=
q[:, :, 1:, :]`) with relative-position terms read from a table by a
[q, k] distance matrix: slice_scatter along dims 2 and 3 (the forward's
functionalized updates), as_strided and as_strided_scatter (autograd's
backward of the updates, over the contiguous form of the gradient) and
index_put with a rank-2 index (the table's gradient). Input [2, 9, 4]: a
class token and 8 tokens of 4 channels, 2 heads. DecomposedRelPos: the rank
7 and 8 ops of its relative-position terms."""

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


class DecomposedRelPos(nn.Module):
    """MViT v2's decomposed relative positions (torchvision's _add_rel_pos):
    einsums of [B, heads, T, H, W, C] queries with [H, K, C] tables
    (ATen permutes rank-7 operands: the generic permute overloads, and
    rank 6 ones that move dim 0), and the terms broadcast to rank 8 and
    summed (unsqueeze and squeeze_dim at dims 5 and 6, views of rank 8, the
    backward's sums over dim 5 or 6 of a rank-8 tensor). Input
    [2, 2, 2, 3, 3, 4]."""

    def __init__(self):
        super().__init__()
        self.rel_h = nn.Parameter(torch.linspace(-1.0, 1.0, 24).view(3, 2, 4))
        self.rel_w = nn.Parameter(torch.linspace(1.0, -1.0, 24).view(3, 2, 4))
        self.rel_t = nn.Parameter(torch.linspace(-0.5, 0.5, 16).view(2, 2, 4))

    def forward(self, q):
        b, heads, t, h, w, _ = q.shape
        rel_h = torch.einsum("bythwc,hkc->bythwk", q, self.rel_h)
        rel_w = torch.einsum("bythwc,wkc->bythwk", q, self.rel_w)
        r_q = q.permute(2, 0, 1, 3, 4, 5).reshape(t, b * heads * h * w, 4)
        rel_t = torch.matmul(r_q, self.rel_t.transpose(1, 2)).transpose(0, 1)
        rel_t = rel_t.view(b, heads, h, w, t, 2).permute(0, 1, 4, 2, 3, 5)
        rel = (rel_h[:, :, :, :, :, None, :, None] +
               rel_w[:, :, :, :, :, None, None, :] +
               rel_t[:, :, :, :, :, :, None, None]).reshape(
                   b, heads, t * h * w, 8)
        return (rel * rel).sum()
