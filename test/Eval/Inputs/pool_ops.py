"""Models whose training steps use the rank-generic pooling specs and the
spatial resampling specs (specs/pool.tdl, specs/resample.tdl) beyond what
library_ops.py covers: 1-d and 3-d poolings (PyTorch 1.13 records the 1-d
ones as the 2-d ops on an input of height 1), unbatched inputs, ceil_mode,
padding, dilation, divisor_override, adaptive bins that do not divide the
input, adaptive max pooling, LPPool2d (an average pooling with the default
stride); nearest and bilinear upsampling, pixel
shuffle, unfold / fold and reflection / replication padding."""

import torch
import torch.nn as nn


class PoolOps(nn.Module):
    """Input [2, 4, 6, 6]."""

    def __init__(self):
        super().__init__()
        self.mix = nn.Conv2d(4, 12, 1)
        self.mp1 = nn.MaxPool1d(3, stride=2, padding=1)
        self.ap1 = nn.AvgPool1d(3, stride=2, padding=1, ceil_mode=True,
                                count_include_pad=False)
        self.aap1 = nn.AdaptiveAvgPool1d(5)
        self.amp1 = nn.AdaptiveMaxPool1d(4)
        self.mp3 = nn.MaxPool3d(2, stride=2, padding=1, ceil_mode=True)
        self.mp3d = nn.MaxPool3d(2, stride=1, dilation=2)
        self.ap3 = nn.AvgPool3d(3, stride=2, padding=1)
        self.ap3x = nn.AvgPool3d(2, stride=1, padding=1,
                                 count_include_pad=False)
        self.ap3o = nn.AvgPool3d(2, stride=2, divisor_override=3)
        self.ap2o = nn.AvgPool2d(3, stride=2, padding=1, divisor_override=5)
        self.aap3 = nn.AdaptiveAvgPool3d((2, 3, 2))
        self.aap3e = nn.AdaptiveAvgPool3d((1, 3, 2))
        self.amp2 = nn.AdaptiveMaxPool2d((4, 5))
        self.amp2e = nn.AdaptiveMaxPool2d((3, 2))
        self.amp3 = nn.AdaptiveMaxPool3d((3, 2, 4))
        self.mp2u = nn.MaxPool2d(3, stride=2, padding=1, dilation=1)
        # records avg_pool2d(x ** 2, [2, 2], []): tofu-export writes the
        # empty stride out as the kernel size
        self.lp2 = nn.LPPool2d(2, 2)

    def forward(self, x):
        h = self.mix(x)                                   # [2, 12, 6, 6]
        x = h[:, :4]                                      # [2, 4, 6, 6]
        line = x.reshape(2, 8, 18)                        # [2, 8, 18]
        vol = h.view(2, 2, 6, 6, 6)                       # [2, 2, 6, 6, 6]
        pooled = [self.mp1(line), self.ap1(line), self.aap1(line),
                  self.amp1(line), self.mp3(vol), self.mp3d(vol),
                  self.ap3(vol), self.ap3x(vol), self.ap3o(vol),
                  self.aap3(vol), self.aap3e(vol), self.amp3(vol),
                  self.ap2o(x), self.amp2(x), self.amp2e(x), self.mp2u(x[0]),
                  # unbatched: [C, D, H, W] and [C, H, W]
                  self.mp3(vol[0]), self.ap3x(vol[0]), self.aap3(vol[0]),
                  self.amp3(vol[0]), self.amp2(x[1]), self.aap1(line[0]),
                  self.lp2(x)]
        # each output squared and summed, as rank-2 views (sums over more
        # dims are another spec family's)
        return sum((p * p).reshape(p.shape[0], -1).sum() for p in pooled)


class ResampleOps(nn.Module):
    """Input [2, 4, 4, 4]."""

    def __init__(self):
        super().__init__()
        self.mix = nn.Conv2d(4, 8, 1)
        up = nn.Upsample
        self.ups = [
            up(scale_factor=2), up(scale_factor=3, mode="linear"),
            up(size=7, mode="linear", align_corners=True),
            up(size=(5, 7)), up(scale_factor=2),
            up(scale_factor=2, mode="bilinear"),
            up(scale_factor=2, mode="bilinear", align_corners=True),
            up(size=(5, 7), mode="bilinear"),
            up(size=(3, 6), mode="bilinear", align_corners=True),
            up(size=(3, 3), mode="bilinear"),
        ]
        self.ups3 = [up(scale_factor=2), up(size=(3, 5, 6)),
                     up(scale_factor=2, mode="trilinear"),
                     up(size=(5, 3, 6), mode="trilinear", align_corners=True)]
        self.shuffle = nn.PixelShuffle(2)
        self.unshuffle = nn.PixelUnshuffle(2)
        self.unfold = nn.Unfold(2, padding=1, stride=2)
        self.unfold_d = nn.Unfold(2, dilation=2)
        self.fold = nn.Fold((5, 5), 3, stride=2, padding=1)
        self.pads1 = [nn.ReflectionPad1d((2, 1)), nn.ReplicationPad1d((1, 3))]
        self.pads2 = [nn.ReflectionPad2d((1, 2, 2, 1)),
                      nn.ReplicationPad2d((2, 0, 1, 3))]
        self.pads3 = [nn.ReflectionPad3d((1, 2, 0, 1, 2, 1)),
                      nn.ReplicationPad3d((0, 1, 2, 1, 1, 2))]

    def forward(self, x):
        h = self.mix(x)                                   # [2, 8, 4, 4]
        line = h[:, :, 0]                                 # [2, 8, 4]
        vol = h.view(2, 2, 4, 4, 4)                       # [2, 2, 4, 4, 4]
        out = [self.ups[0](line), self.ups[1](line), self.ups[2](line)]
        out += [u(h) for u in self.ups[3:]]
        out += [u(vol) for u in self.ups3]
        unf = self.unfold(h)                              # [2, 32, 9]
        out += [self.shuffle(h), self.unshuffle(h), unf,
                self.unfold_d(h), self.fold(unf[:, :18])]
        out += [p(line) for p in self.pads1] + [p(h) for p in self.pads2]
        out += [p(vol) for p in self.pads3] + [self.pads2[0](h[0])]
        return sum((p * p).reshape(p.shape[0], -1).sum() for p in out)


class TinyResample(nn.Module):
    """test/Runtime/resample.test's step: MaxPool3d, AvgPool1d,
    AdaptiveMaxPool2d, nearest and bilinear Upsample and PixelShuffle
    between two convolutions. Input [2, 4, 4, 4]."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3, padding=1)
        self.mp3 = nn.MaxPool3d(2, stride=2, padding=1, ceil_mode=True)
        self.ap1 = nn.AvgPool1d(3, stride=2, padding=1)
        self.amp = nn.AdaptiveMaxPool2d((3, 2))
        self.near = nn.Upsample(scale_factor=2)
        self.bil = nn.Upsample(scale_factor=2, mode="bilinear")
        self.shuffle = nn.PixelShuffle(2)
        self.head = nn.Conv2d(2, 3, 3, padding=1)

    def forward(self, x):
        h = torch.relu(self.conv(x))                     # [2, 8, 4, 4]
        v = self.mp3(h.view(2, 2, 4, 4, 4))              # [2, 2, 3, 3, 3]
        a = self.ap1(h.reshape(2, 8, 16))                # [2, 8, 8]
        m = self.amp(h)                                  # [2, 8, 3, 2]
        u = self.shuffle(self.near(h) + self.bil(h))     # [2, 2, 16, 16]
        y = self.head(u)                                 # [2, 3, 16, 16]
        return ((y * y).reshape(2, -1).sum() + (v * v).reshape(2, -1).sum()
                + (a * a).reshape(2, -1).sum() + (m * m).reshape(2, -1).sum())
