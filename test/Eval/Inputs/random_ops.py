"""Every random op tofu-export computes (specs/random.tdl), for the spec
check against PyTorch (utils/check-specs-against-torch.py, which compares
their shapes, their draws at p = 0 and 1 and their moments with PyTorch's,
as PyTorch's masks are not reproducible) and the kernel checks."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class RandomOps(nn.Module):
    """Dropout (training) and the random fills and factories of a step."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        h = self.fc(x)
        d = F.dropout(h, 0.1, True) + F.dropout(h.relu(), 0.0, True)
        noise = (torch.rand_like(h) + torch.randn_like(h) +
                 torch.empty_like(h).uniform_(-1, 2) +
                 torch.empty_like(h).normal_(1, 3) +
                 torch.rand(h.shape, device=h.device) +
                 torch.randn(2, 3, 6, device=h.device) +
                 torch.randint(7, h.shape, device=h.device) +
                 torch.randint_like(h, 5) +
                 torch.randint(2, 9, h.shape, device=h.device).float() +
                 torch.bernoulli(h.sigmoid().detach()) +
                 torch.normal(h.detach(), 0.5) +
                 torch.normal(2.0, h.detach().abs()) +
                 torch.normal(h.detach(), h.detach().abs() + 0.1) +
                 torch.normal(0.5, 2.0, (2, 3, 6), device=h.device) +
                 torch.empty_like(h).exponential_(2.0))
        return (d * noise).sum()
