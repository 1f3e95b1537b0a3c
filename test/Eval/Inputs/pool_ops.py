"""Models whose training steps use the rank-generic pooling specs and the
spatial resampling specs (specs/pool.tdl, specs/resample.tdl) beyond what
library_ops.py covers: 1-d and 3-d poolings (PyTorch 1.13 records the 1-d
ones as the 2-d ops on an input of height 1), unbatched inputs, ceil_mode,
padding, dilation, divisor_override, adaptive bins that do not divide the
input, adaptive max pooling; nearest and bilinear upsampling, pixel
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

    def forward(self, x):
        h = self.mix(x)                                   # [2, 12, 6, 6]
        x = h[:, :4]                                      # [2, 4, 6, 6]
        line = x.reshape(2, 8, 18)                        # [2, 8, 18]
        vol = h.view(2, 2, 6, 6, 6)                       # [2, 2, 6, 6, 6]
        pooled = [self.mp1(line), self.ap1(line), self.aap1(line),
                  self.amp1(line), self.mp3(vol), self.mp3d(vol),
                  self.ap3(vol), self.ap3x(vol), self.ap3o(vol),
                  self.aap3(vol), self.aap3e(vol), self.amp3(vol),
                  self.ap2o(x), self.amp2(x), self.amp2e(x), self.mp2u(x[0])]
        # each output squared and summed, as rank-2 views (sums over more
        # dims are another spec family's)
        return sum((p * p).reshape(p.shape[0], -1).sum() for p in pooled)
