"""Tiny models whose training steps use torch.nn's loss functions and the
layers that are neither convolution, pooling, norm nor activation
(nn.Bilinear, nn.EmbeddingBag, distances, dropouts, padding), so that
utils/check-specs-against-torch.py checks each of their specs against
PyTorch on a real step. Each model returns its loss (`--loss output`).
Targets that must lie in a range are made from a float input inside the
model (sigmoid for probabilities, sign for +-1 labels)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class PointwiseLosses(nn.Module):
    """L1, smooth L1, Huber, BCE, BCE with logits (with and without
    pos_weight), soft margin, Poisson NLL, the mean, sum and none
    reductions. Inputs x [4, 6], t [4, 5]."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 5)
        self.register_buffer("pos_weight", torch.linspace(0.5, 2.0, 5))

    def forward(self, x, t):
        h = self.lin(x)
        p = torch.sigmoid(t)
        s = torch.sign(t)
        h3 = h.view(4, 5, 1)
        return (nn.L1Loss()(h, t) +
                nn.SmoothL1Loss(beta=0.5)(h, t) +
                nn.SmoothL1Loss(reduction="sum")(h3, t.view(4, 5, 1)) +
                nn.HuberLoss(delta=0.7)(h, t) +
                nn.HuberLoss(reduction="none")(h, t).mean() +
                nn.BCELoss()(torch.sigmoid(h), p) +
                nn.BCEWithLogitsLoss()(h, p) +
                nn.BCEWithLogitsLoss(pos_weight=self.pos_weight)(h, p) +
                nn.SoftMarginLoss()(h, s) +
                nn.PoissonNLLLoss()(h, t.abs()) +
                nn.PoissonNLLLoss(log_input=False, full=True)(
                    h.exp(), t.abs() * 3.0))


class Bilinear(nn.Module):
    """nn.Bilinear (the forward and its three gradients) on batched
    [2, 3, I] inputs. Inputs x [2, 3, 4], y [2, 3, 5]."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(5, 5)
        self.bil = nn.Bilinear(4, 5, 3)

    def forward(self, x, y):
        out = self.bil(self.a(x), self.b(y))
        return (out * out).mean()


class ClassLosses(nn.Module):
    """Losses over class scores: cross-entropy with class weights and with
    probability targets, NLL over [N, C, H, W]
    (nll_loss2d), multi-class margin (p 1 and 2), multi-label margin
    (targets listed up to the first -1: c - 1 makes some -1), multi-label
    soft margin and KL divergence. Inputs x [4, 6], c [4] i64,
    m [4, 5] i64, img [2, 3, 4, 4], pix [2, 4, 4] i64 (--classes 5)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 5)
        self.conv = nn.Conv2d(3, 5, 1)
        self.register_buffer("weight", torch.linspace(0.5, 1.5, 5))

    def forward(self, x, c, m, img, pix):
        h = self.lin(x)
        logp = F.log_softmax(self.conv(img), 1)
        return (nn.CrossEntropyLoss(weight=self.weight)(h, c) +
                nn.CrossEntropyLoss(weight=self.weight, reduction="sum")(h, c) +
                nn.CrossEntropyLoss()(h, F.softmax(h.detach() * 2.0, 1)) +
                nn.NLLLoss()(logp, pix) +
                nn.NLLLoss(reduction="sum")(logp, pix) +
                nn.MultiMarginLoss()(h, c) +
                nn.MultiMarginLoss(p=2, margin=0.5, reduction="sum")(h, c) +
                nn.MultiLabelMarginLoss()(h, m - 1) +
                nn.MultiLabelSoftMarginLoss()(h, (m > 2).float()) +
                nn.KLDivLoss(reduction="batchmean")(
                    F.log_softmax(h, 1), F.softmax(x[:, :5], 1)) +
                nn.KLDivLoss(reduction="batchmean", log_target=True)(
                    F.log_softmax(h, 1), F.log_softmax(x[:, 1:], 1)))


class Bags(nn.Module):
    """nn.EmbeddingBag in modes sum (with and without per_sample_weights),
    mean and max on a 2-d input (bags of 3 indices). Inputs idx [4, 3] i64,
    x [4, 3] (--classes 10: indices in [0, 10))."""

    def __init__(self):
        super().__init__()
        self.sum = nn.EmbeddingBag(10, 3, mode="sum")
        self.mean = nn.EmbeddingBag(10, 3, mode="mean")
        self.max = nn.EmbeddingBag(10, 3, mode="max")
        self.psw = nn.Linear(3, 3)

    def forward(self, idx, x):
        a = self.sum(idx, per_sample_weights=self.psw(x))
        b = self.sum(idx) + self.mean(idx) * 2.0 + self.max(idx) * 3.0
        return (a * b).mean()


class PairLosses(nn.Module):
    """Losses over pairs and triplets of embeddings and the distance layers
    they use: nn.CosineSimilarity, nn.PairwiseDistance, margin ranking,
    hinge embedding, cosine embedding, triplet margin (with the default and
    with a cosine distance). Inputs x [4, 6], t [4, 5]."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 5)
        self.b = nn.Linear(6, 5)

    def forward(self, x, t):
        a, b = self.a(x), self.b(x)
        s = torch.sign(t)
        cos = nn.CosineSimilarity(dim=1)(a, b)
        dist = nn.PairwiseDistance(p=2.0)(a, b)
        return (cos.sum() + dist.mean() +
                nn.MarginRankingLoss(margin=0.1)(a, b, s) +
                nn.HingeEmbeddingLoss(margin=0.5)(a, s) +
                nn.CosineEmbeddingLoss(margin=0.1)(a, b, s[:, 0]) +
                nn.TripletMarginLoss(margin=1.0)(a, b, t) +
                nn.TripletMarginWithDistanceLoss(
                    distance_function=lambda u, v:
                        1.0 - F.cosine_similarity(u, v))(a, b, t))


class Layers(nn.Module):
    """The small layers: channel dropouts (Dropout1d/2d/3d), AlphaDropout,
    FeatureAlphaDropout, zero and constant padding of rank 3 to 5,
    Identity, Flatten/Unflatten, softmax over a middle dim. Input
    x [2, 4, 3, 3]."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.drop1 = nn.Dropout1d(0.3)
        self.drop2 = nn.Dropout2d(0.3)
        self.drop3 = nn.Dropout3d(0.3)
        self.alpha = nn.AlphaDropout(0.2)
        self.falpha = nn.FeatureAlphaDropout(0.2)
        self.pad1 = nn.ConstantPad1d((1, 2), 0.5)
        self.pad2 = nn.ZeroPad2d((1, 0, 2, 1))
        self.pad3 = nn.ConstantPad3d(1, -1.0)
        self.flat = nn.Flatten()
        self.unflat = nn.Unflatten(1, (4, 9))
        self.soft = nn.Softmax(dim=1)
        self.ident = nn.Identity()

    def forward(self, x):
        h = self.ident(self.lin(x))                                # 2x4x3x3
        d = (self.drop2(h) + self.alpha(h) + self.falpha(h) +
             self.drop3(h.unsqueeze(2)).squeeze(2) +
             self.drop1(h.flatten(2)).view(2, 4, 3, 3))
        p = (self.pad1(d.flatten(2)).sum() + self.pad2(d).sum() +
             self.pad3(d.unsqueeze(1)).sum())
        u = self.unflat(self.flat(d))                              # 2x4x9
        return p + (self.soft(u) * u).sum()


class Tiny(nn.Module):
    """A small step through nn.EmbeddingBag (mean), nn.Bilinear and three
    losses (cross-entropy, smooth L1, BCE with logits) for planning and
    running partitioned (test/Runtime/loss-layers.test). Inputs idx [4, 3]
    i64, x [4, 6], c [4] i64."""

    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(10, 5, mode="mean")
        self.lin = nn.Linear(6, 5)
        self.bil = nn.Bilinear(5, 5, 5)

    def forward(self, idx, x, c):
        h = self.bil(self.bag(idx), self.lin(x))
        return (F.cross_entropy(h, c) +
                F.smooth_l1_loss(h, x[:, :5], beta=0.5) +
                F.binary_cross_entropy_with_logits(h, torch.sigmoid(x[:, 1:])))


class LoweredLosses(nn.Module):
    """The losses tofu-export lowers (tofu_export/loss_lowerings.py):
    cross-entropy with label smoothing and class-index targets (with and
    without class weights; the targets equal to c[0] ignored) and Gaussian
    NLL (var of the input's shape, and one value per sample with
    full=True). Inputs x [4, 6], c [4] i64, t [4, 5] (--classes 5)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 5)
        self.var = nn.Linear(6, 5)
        self.register_buffer("weight", torch.linspace(0.5, 1.5, 5))

    def forward(self, x, c, t):
        h = self.lin(x)
        v = F.softplus(self.var(x))
        target = c.masked_fill(c == c[0], -100)  # c[0] and its repeats
        return (nn.CrossEntropyLoss(label_smoothing=0.1)(h, target) +
                nn.CrossEntropyLoss(weight=self.weight, label_smoothing=0.2,
                                    reduction="sum")(h, c) +
                nn.CrossEntropyLoss(weight=self.weight,
                                    label_smoothing=0.3)(h, target) +
                nn.GaussianNLLLoss()(h, t, v) +
                nn.GaussianNLLLoss(full=True, reduction="sum")(
                    h, t, v[:, 0]))
