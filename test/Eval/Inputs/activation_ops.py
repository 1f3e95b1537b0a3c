"""Models whose training steps use every activation layer of
torch.nn.modules.activation that trains, with their parameters where they
have them, and the element-wise math ops beside them (pow with a number or a
tensor exponent, log, log1p, expm1, reciprocal, rsqrt, erf, sign, abs). Each
layer reads `h`, a function of the input and a parameter, so that the
backward of every layer is in the step. Input [2, 4, 6]; the loss is the
output."""

import torch
import torch.nn as nn


class ActivationOps(nn.Module):
    """ELU, SELU, CELU (elu, celu, elu_backward; in place: is_result 1), GLU
    over the last dim, dim 0, dim 1 and dim 2 of a rank-4 tensor, PReLU with
    one weight (ranks 3 and 4) and with C weights (ranks 2, 3 and 4),
    Softplus (default and beta 2, threshold 1), Mish, LeakyReLU (in place:
    self_is_result 1), Hardshrink, Softshrink, Tanhshrink, Softsign,
    LogSigmoid, Threshold, ReLU6, Hardtanh, SiLU, Softmin, Softmax2d,
    Softmax and LogSoftmax over dim 1 of rank 3 and dim 2 of rank 4."""

    def __init__(self):
        super().__init__()
        self.gain = nn.Parameter(torch.randn(6))
        self.layers = nn.ModuleList([
            nn.ELU(), nn.ELU(alpha=0.5), nn.SELU(), nn.CELU(alpha=0.7),
            nn.Softplus(), nn.Softplus(beta=2.0, threshold=1.0), nn.Mish(),
            nn.LeakyReLU(), nn.Hardshrink(), nn.Softshrink(0.3),
            nn.Tanhshrink(), nn.Softsign(), nn.LogSigmoid(),
            nn.Threshold(0.1, 20.0), nn.ReLU6(), nn.Hardtanh(-2.0, 3.0),
            nn.SiLU(), nn.Softmin(dim=1), nn.Softmax(dim=1),
            nn.LogSoftmax(dim=1), nn.GLU(), nn.GLU(dim=0), nn.GLU(dim=1),
        ])
        self.prelu1 = nn.PReLU()
        self.prelu4 = nn.PReLU(4)
        self.prelu6 = nn.PReLU(6, init=0.1)
        self.elu_ = nn.ELU(alpha=0.8, inplace=True)
        self.leaky_ = nn.LeakyReLU(0.2, inplace=True)
        self.softmax2d = nn.Softmax2d()
        self.softmax = nn.Softmax(dim=2)
        self.log_softmax = nn.LogSoftmax(dim=2)
        self.glu = nn.GLU(dim=2)

    def forward(self, x):
        h = x * self.gain                                          # 2x4x6
        q = h.view(2, 4, 2, 3)
        outs = [layer(h) for layer in self.layers]
        outs += [self.prelu1(h), self.prelu1(q), self.prelu4(h),
                 self.prelu4(q), self.prelu6(h.view(8, 6)),
                 self.elu_(h * 2.0), self.leaky_(h * 3.0),
                 self.softmax2d(q), self.softmax(q), self.log_softmax(q),
                 self.glu(q)]
        return sum((y * y).sum() for y in outs)


class PowOps(nn.Module):
    """pow with a number exponent (x ** 2, x ** 3, x ** 0.5, x ** -1,
    x ** 2.5, torch.square), a tensor exponent (x ** y) and a number base
    (torch.pow(2.0, x)), and the unary ops log, log1p, expm1, reciprocal,
    rsqrt, erf, sign and abs."""

    def __init__(self):
        super().__init__()
        self.gain = nn.Parameter(torch.randn(6))

    def forward(self, x):
        h = x * self.gain                                          # 2x4x6
        p = h * h + 0.5                                            # positive
        outs = [h ** 2, h ** 3, p ** 0.5, p ** -1, p ** 2.5, torch.square(h),
                p ** h, torch.pow(2.0, h), torch.log(p),
                torch.log1p(p), torch.expm1(h), torch.reciprocal(p),
                torch.rsqrt(p), torch.erf(h), torch.sign(h) * h, torch.abs(h)]
        return sum((y * y).sum() for y in outs)


class ActivationMLP(nn.Module):
    """A small network of the parametrised activations, for planning and
    running (test/Runtime/activations.test): Linear, PReLU with C weights,
    ELU, GLU, Linear, PReLU with one weight, Softplus, Mish, a square and a
    square root. Input [8, 16]."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.prelu = nn.PReLU(32)
        self.elu = nn.ELU(alpha=0.5)
        self.glu = nn.GLU()
        self.fc2 = nn.Linear(16, 8)
        self.prelu1 = nn.PReLU()
        self.softplus = nn.Softplus(beta=2.0, threshold=1.0)
        self.mish = nn.Mish()

    def forward(self, x):
        h = self.glu(self.elu(self.prelu(self.fc1(x))))            # 8x16
        y = self.mish(self.softplus(self.prelu1(self.fc2(h))))     # 8x8
        return (y ** 2).mean() + (y * y + 1.0).pow(0.5).mean()


class RReLUOps(nn.Module):
    """nn.RReLU in training, out of place and in place: tofu-export lowers
    its random slopes to uniform, le_Scalar, where_self and mul_Tensor
    (tofu_export/activation_lowerings.py). Input [2, 3, 6]."""

    def __init__(self):
        super().__init__()
        self.gain = nn.Parameter(torch.randn(6))
        self.rrelu = nn.RReLU()
        self.rrelu_ = nn.RReLU(0.1, 0.3, inplace=True)

    def forward(self, x):
        h = x * self.gain
        y = self.rrelu(h) + self.rrelu_(h * 2.0)
        return (y * y).sum()
