"""Models for the tests of tofu-export's decompositions, lowerings, meta
fallbacks, inputs given as values and the errors of test/Export/lowering.test
and test/Export/values.test."""

import torch
import torch.nn.functional as F


class Mish(torch.nn.Module):
    """mish: decomposed (with softplus, which its decomposition and its
    backward call) where the library has no spec for it."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(4))

    def forward(self, x):
        return F.mish(x * self.w)


class WeightNorm(torch.nn.Module):
    """nn.utils.weight_norm over dim 0 and over the last dim (the fused
    `_weight_norm_interface` for both; Wav2Vec2 uses the last dim)."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.utils.weight_norm(torch.nn.Linear(4, 6))
        self.b = torch.nn.utils.weight_norm(torch.nn.Linear(6, 3), dim=1)

    def forward(self, x):
        return self.b(torch.relu(self.a(x)))


class RepeatInterleave(torch.nn.Module):
    """repeat_interleave by a Python int (WaveRNN's upsampling)."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(3))

    def forward(self, x):
        return (x * self.w).repeat_interleave(2, -1).repeat_interleave(3, 1)


class LengthsMask(torch.nn.Module):
    """A padding mask from `lengths` (torchaudio's Conformer and Emformer):
    `.item()` of its max sizes the mask, which is traced with known values
    when the lengths are given as values."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(4))

    def forward(self, x, lengths):
        n = int(torch.max(lengths).item())
        mask = torch.arange(n, device=lengths.device).expand(
            lengths.size(0), n) >= lengths.unsqueeze(1)
        return (x * self.w).masked_fill(mask.unsqueeze(-1), 0.0)


class ReadsValue(torch.nn.Module):
    """A branch on a tensor's value: not traceable (one error)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        if y.sum() > 0:
            return y
        return -y


class TwoMissing(torch.nn.Module):
    """Two ops that will not have specs soon (a sort and a cumulative
    product), and sort's backward (a scatter)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        s, _ = torch.sort(y, dim=1)
        return s + torch.cumprod(y, 1)


class Cholesky(torch.nn.Module):
    """torch.linalg.cholesky: its backward solves with
    aten.linalg_solve_triangular, which has no Meta kernel in PyTorch 1.13
    (traced through meta_fallback.py)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        return torch.linalg.cholesky(y.t() @ y + torch.eye(4, device=y.device))


class MaskSelect(torch.nn.Module):
    """Boolean-mask indexing: the output's shape depends on values."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        return y[y > 0].sum()
