"""A model whose training step samples a feature map at positions that
depend on a parameter, as RAFT looks up its correlation pyramid
(F.grid_sample, bilinear, zero padding, align_corners True and False):
grid_sampler_2d and both outputs of its backward (the input's and the
grid's gradient), and linspace. Some positions fall outside the map
(zero padding) or on its border. Input [2, 3, 5, 6]. ConvexUpsample: RAFT's
rank-7 upsampling."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class SampleOps(nn.Module):
    def __init__(self):
        super().__init__()
        self.shift = nn.Parameter(torch.tensor([0.15, -0.2]))
        self.scale = nn.Parameter(torch.tensor(1.3))
        self.gain = nn.Parameter(torch.linspace(0.5, 1.5, 3).view(1, 3, 1, 1))

    def forward(self, x):
        n = x.shape[0]
        x = x * self.gain
        ys = torch.linspace(-1.0, 1.0, 4, device=x.device)
        xs = torch.linspace(-1.2, 0.9, 7, device=x.device)
        gy, gx = torch.meshgrid(ys, xs, indexing="ij")
        grid = torch.stack([gx, gy], dim=-1) * self.scale + self.shift
        grid = grid.expand(n, 4, 7, 2)
        total = (F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros",
                               align_corners=True) ** 2).sum()
        y = F.grid_sample(x * x, grid * 0.8, mode="bilinear",
                          padding_mode="zeros", align_corners=False)
        return total + (y * torch.linspace(0.5, 2.0, 7, device=x.device)).sum()


class ConvexUpsample(nn.Module):
    """RAFT's convex upsampling of a flow by a factor 2 (torchvision's
    upsample_flow with a mask): a rank-7 view of the mask, a softmax over
    its 9 neighbours, the unfolded flow broadcast against it (expand of
    rank 7 in the backward) and summed over the neighbours, and the
    gradient of the broadcast summed over dims {3, 4} of a rank-7 tensor.
    Input [1, 36, 3, 4] (the mask); the flow is a parameter."""

    def __init__(self):
        super().__init__()
        self.flow = nn.Parameter(torch.linspace(-1.0, 1.0, 24).view(1, 2, 3, 4))

    def forward(self, mask):
        n, _, h, w = mask.shape
        mask = torch.softmax(mask.view(n, 1, 9, 2, 2, h, w), dim=2)
        up = F.unfold(2 * self.flow, kernel_size=3, padding=1)
        up = up.view(n, 2, 9, 1, 1, h, w)
        out = torch.sum(mask * up, dim=2)
        out = out.permute(0, 1, 4, 2, 5, 3).reshape(n, 2, 2 * h, 2 * w)
        return (out * out).sum()
