"""Small models for the tofu-export tests."""

import torch
import torch.nn as nn


class MLP(nn.Module):
    """Two linear layers with a ReLU."""

    def __init__(self, width=1024, hidden=256, out=10):
        super().__init__()
        self.fc1 = nn.Linear(width, hidden)
        self.fc2 = nn.Linear(hidden, out)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Scalar(nn.Module):
    """Returns its own loss: the mean of a linear map of two inputs, times a
    tensor constant. Its parameter `unused` does not affect the loss."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(16, 4))
        self.unused = nn.Parameter(torch.randn(3))

    def forward(self, x, y):
        return ((x @ self.w) * y * torch.tensor(2.0)).mean()


class Broken(nn.Module):
    """Fails in its constructor."""

    def __init__(self):
        super().__init__()
        raise RuntimeError("no such layer")


class ViewUpdate(nn.Module):
    """Updates a view in place: tofu-export functionalizes it (or, with
    --no-functionalize, rejects it naming this line)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 8))

    def forward(self, x):
        y = x @ self.w
        y[:, 0].mul_(2)  # errors.test checks this line number
        return y


class SliceAssign(nn.Module):
    """Writes a constant into a slice of a fresh tensor (as Swin builds its
    attention mask) and into a column of an activation."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(8, 8))

    def forward(self, x):
        mask = x.new_zeros(x.shape[0], 8)
        mask[1:3, 2:5] = 1.0
        y = (x @ self.w) * (mask + 1)
        y[:, 3] = 0.5 * y[:, 4]
        return y


class InplaceDropout(nn.Module):
    """An inplace=True dropout on a reshaped tensor, inside a submodule."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.5, inplace=True))

    def forward(self, x):
        return self.head(self.fc(x).unsqueeze(2))  # line checked by errors.test


class ChannelsLastPool(nn.Module):
    """Average pooling of a channels-last tensor (as ConvNeXt and Swin pool
    their permuted features): the kernel re-strides its output with
    `as_strided_`, and its gradient is written back through a strided
    buffer."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def forward(self, x):
        y = self.fc(x).permute(0, 3, 1, 2)
        return self.pool(y).flatten(1)


class TransposedSliceUpdate(nn.Module):
    """Adds into a slice of an activation that is then read transposed (as
    MViT v2 adds its relative-position and residual terms): the slice's
    gradient is read by autograd with `as_strided` from a copy of the
    transposed gradient in the activation's own (contiguous) strides."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 24)
        self.extra = nn.Linear(8, 16)
        self.out = nn.Linear(24, 4)

    def forward(self, x):
        b = x.shape[0]
        h = self.fc(x).view(b, 2, 3, 4) * 2.0
        h[:, :, 1:, :] += self.extra(x).view(b, 2, 2, 4)
        return self.out(h.transpose(1, 2).reshape(b, 24))


NOT_A_MODULE = 3
