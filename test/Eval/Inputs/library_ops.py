"""A model whose training step uses the operator-library specs that the
default check models (MLP, RNN, GPT, ResNet-18) do not: a convolution with a
bias, adaptive average pooling to a size that does and one that does not
divide the input, the tanh GELU, negation, subtracting a number, a full sum
and dropout (bernoulli, opaque)."""

import torch
import torch.nn as nn


class LibraryOps(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1, bias=True)
        self.uneven = nn.AdaptiveAvgPool2d((3, 2))
        self.even = nn.AdaptiveAvgPool2d((1, 1))
        self.gelu = nn.GELU(approximate="tanh")
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        h = self.gelu(self.conv(x))
        a = self.uneven(h)
        b = self.even(-h)
        return (a - 1.0).sum() + self.drop(b).sum()


class ModelOps(nn.Module):
    """The specs real models beyond the default check models use (MobileNet,
    DenseNet, ShuffleNet, SqueezeNet, GoogLeNet, ViT, LSTM): depthwise and
    grouped convolutions, transposed convolutions (stride 1 with a bias,
    stride 2), average pooling (padded, ceil_mode, count_include_pad off),
    max pooling with ceil_mode, the hard activations, cat (dims 0, 1, last;
    more than 8 inputs), stack, split, unsafe_split, unbind, slices (step 1
    and 2), select, permute, unsqueeze, a rank-5 channel shuffle and a mean
    over a middle dim. Input [2, 4, 8, 8]."""

    def __init__(self):
        super().__init__()
        self.dw = nn.Conv2d(4, 4, 3, padding=1, groups=4, bias=False)
        self.dw2 = nn.Conv2d(4, 4, 3, stride=2, padding=1, groups=4, bias=False)
        self.grp = nn.Conv2d(4, 6, 3, padding=1, groups=2)
        self.up = nn.ConvTranspose2d(6, 3, 3, stride=2, padding=1,
                                     output_padding=1, bias=False)
        self.up1 = nn.ConvTranspose2d(3, 2, 3, padding=1)
        self.avg = nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                count_include_pad=False)
        self.avg1 = nn.AvgPool2d(3, stride=2, padding=1)
        self.avg2 = nn.AvgPool2d(2)
        self.mp = nn.MaxPool2d(3, stride=2, ceil_mode=True)

    def forward(self, x):
        h = nn.functional.hardtanh(self.dw(x), 0.0, 6.0)          # 2x4x8x8
        g = nn.functional.hardswish(self.dw2(h))                   # 2x4x4x4
        s = nn.functional.hardsigmoid(self.grp(h))                 # 2x6x8x8
        u = self.up1(self.up(s))                                   # 2x2x16x16
        p = self.avg1(u) + self.mp(u)                              # 2x2x8x8
        q = self.avg(u)                                            # 2x2x9x9
        a, b = torch.split(h, 2, dim=1)                            # 2x2x8x8
        c, d = h.unsafe_chunk(2, dim=1)
        cat1 = torch.cat([a, b * 2.0, h[:, 1:3], c], dim=1)        # 2x8x8x8
        many = torch.cat([h] + [a * float(k) for k in range(9)], 1)  # 2x22x8x8
        cat0 = torch.cat([p, d, a], dim=0)                         # 6x2x8x8
        catl = torch.cat([p, p[:, :, :, ::2]], dim=3)              # 2x2x8x12
        st = torch.stack(torch.unbind(g, dim=0), dim=1)            # 4x2x4x4
        st0 = torch.stack([g[:, 0], g[:, 3], g[:, 1]])             # 3x2x4x4
        perm = self.avg2(cat1).permute(0, 2, 3, 1)                 # 2x4x4x8
        shuffle = h.view(2, 2, 2, 8, 8).transpose(1, 2).reshape(2, 4, 8, 8)
        mid = shuffle.mean(1).unsqueeze(1) * h.mean(2).unsqueeze(2)  # 2x4x8x8
        return ((q * q).sum() + (cat1 * cat1).sum() + many.sum() + cat0.sum() +
                (catl * catl).sum() + (st * st).sum() + st0.sum() +
                (perm * perm).sum() + (mid * mid).sum())


class ZooOps(nn.Module):
    """The specs the rest of the torchvision zoo adds (EfficientNet, ConvNeXt,
    Swin, DenseNet-201): SiLU, a kernel = stride convolution's input
    gradient, a channels-last layer norm's weight and bias gradients, sums
    over three dims (a [C] bias and a [C, 1, 1] scale on a rank-4 tensor),
    rank-5 and rank-6 views and permutes.
    Input [2, 4, 8, 8]."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1, bias=False)
        self.patch = nn.Conv2d(4, 6, 2, stride=2)
        self.norm = nn.LayerNorm(6)
        self.bias = nn.Parameter(torch.randn(6))
        self.scale = nn.Parameter(torch.randn(6, 1, 1))

    def forward(self, x):
        h = nn.functional.silu(self.conv(x))                       # 2x4x8x8
        p = self.patch(h) * self.scale                             # 2x6x4x4
        c = self.norm(p.permute(0, 2, 3, 1)) + self.bias           # 2x4x4x6
        # Swin's window partition: rank-6 view and permute, rank-5 permute
        w = c.view(2, 2, 2, 2, 2, 6).permute(0, 1, 3, 2, 4, 5)      # 2x2x2x2x2x6
        t = w.reshape(8, 4, 3, 1, 2).permute(2, 0, 3, 1, 4)         # 3x8x1x4x2
        return (c * c).sum() + (t * t).sum()


class SwinOps(nn.Module):
    """The ops of Swin and Swin v2 blocks (and MaxViT's relative position
    bias, nn.MultiheadAttention's separate key/value projection): padding
    (constant_pad_nd, cropped in its backward), roll, a shifted-window mask
    built by slice assignment (slice_scatter) and compared (eq/ne, masked
    fill), a gathered bias table (index.Tensor; backward index_put),
    F.normalize (norm, clamp_min; backward eq, ge, where), a clamped and
    exponentiated logit scale (clamp, exp; backward le, where), a bias with
    a zeroed slice (slice_scatter; its gradient's as_strided_scatter) and
    split_with_sizes. Input [2, 4, 8, 8]."""

    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(9, 2))
        self.register_buffer("index", torch.tensor(
            [0, 1, 2, 4, 3, 4, 5, 7, 6, 7, 8, 1, 0, 4, 4, 8]))
        self.logit = nn.Parameter(torch.randn(2, 1, 1))
        self.qkv = nn.Linear(4, 12)
        self.gain = nn.Parameter(torch.randn(4))

    def forward(self, x):
        h = x.permute(0, 2, 3, 1) * self.gain                      # 2x8x8x4
        p = nn.functional.pad(h, (0, 0, 0, 2, 0, 2))               # 2x10x10x4
        r = torch.roll(p, shifts=(-3, -3), dims=(1, 2))[:, :8, :8]  # 2x8x8x4
        mask = r.new_zeros((8, 8))
        count = 0
        for hs in ((0, -4), (-4, -2), (-2, None)):
            for ws in ((0, -4), (-4, -2), (-2, None)):
                mask[hs[0]:hs[1], ws[0]:ws[1]] = count
                count += 1
        m = mask.view(16, 4)
        m = m.unsqueeze(1) - m.unsqueeze(2)                         # 16x4x4
        m = m.masked_fill(m != 0, -100.0).masked_fill(m == 0, 0.0)
        bias = self.table[self.index]                               # 16x2
        qkv_bias = self.qkv.bias.clone()
        qkv_bias[4:8].zero_()
        w_q, w_kv = self.qkv.weight.split([4, 8])
        q = nn.functional.linear(r, w_q, qkv_bias[:4])              # 2x8x8x4
        kv = nn.functional.linear(r, w_kv, qkv_bias[4:])            # 2x8x8x8
        qn = nn.functional.normalize(q, dim=-1)
        scale = torch.clamp(self.logit, max=1.5).exp()              # 2x1x1
        a = qn.view(2, 16, 4, 4) * scale.view(2, 1, 1, 1) + m       # 2x16x4x4
        a = torch.clamp(a, -5.0, 5.0) + torch.clamp(a, min=-1.0)
        b = bias.view(16, 2, 1).masked_fill(bias.view(16, 2, 1) > 0.5, 0.5)
        c = torch.where(kv < 0.0, kv * 2.0, kv)
        return ((a * a).sum() + (b * b).sum() + (c * c).sum() +
                (qn * qn).sum() + (p * p).sum())
