"""Every loss class torch.nn exports, at a small size: the catalogue's
`nn-loss` family. The model is the loss of its (trainably scaled) inputs
against fixed targets (buffers); inputs are mapped into the loss's domain
(sigmoid for probabilities, log_softmax for log-probabilities).
"""

import random

import torch
import torch.nn as nn

from . import Case

_rng = random.Random(0)


def _floats(*shape, low=-1.0, high=1.0):
    n = 1
    for d in shape:
        n *= d
    values = [_rng.uniform(low, high) for _ in range(n)]
    return torch.tensor(values, dtype=torch.float32).reshape(shape)


def _ints(*shape, high):
    n = 1
    for d in shape:
        n *= d
    return torch.tensor([_rng.randrange(high) for _ in range(n)],
                        dtype=torch.int64).reshape(shape)


def _signs(*shape):
    return _ints(*shape, high=2).float() * 2 - 1


def _loss(build, inputs, targets, forward=None):
    return Case(build=build, inputs=list(inputs), targets=targets,
                forward=forward, is_loss=True)


def _log_softmax(dim):
    return lambda m, x, t: m(torch.log_softmax(x, dim), t)


X = "2x5"

CASES = {
    "AdaptiveLogSoftmaxWithLoss": _loss(
        lambda: nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 8]),
        ["4x8"], lambda: [_ints(4, high=10)],
        forward=lambda m, x, t: m(x, t).loss),
    "BCELoss": _loss(nn.BCELoss, [X], lambda: [_floats(2, 5, low=0.0)],
                     forward=lambda m, x, t: m(torch.sigmoid(x), t)),
    "BCEWithLogitsLoss": _loss(nn.BCEWithLogitsLoss, [X],
                               lambda: [_floats(2, 5, low=0.0)]),
    # log-probabilities T=6 x N=2 x C=5; targets of lengths 3 and 2
    "CTCLoss": _loss(nn.CTCLoss, ["6x2x5"],
                     lambda: [torch.tensor([[1, 2, 2], [3, 4, 0]])],
                     forward=lambda m, x, t: m(torch.log_softmax(x, 2), t,
                                               (6, 6), (3, 2))),
    "CosineEmbeddingLoss": _loss(nn.CosineEmbeddingLoss, ["2x8", "2x8"],
                                 lambda: [_signs(2)]),
    "CrossEntropyLoss": _loss(nn.CrossEntropyLoss, [X],
                              lambda: [_ints(2, high=5)]),
    "GaussianNLLLoss": _loss(nn.GaussianNLLLoss, [X],
                             lambda: [_floats(2, 5),
                                      _floats(2, 5, low=0.5, high=2.0)]),
    "HingeEmbeddingLoss": _loss(nn.HingeEmbeddingLoss, [X],
                                lambda: [_signs(2, 5)]),
    "HuberLoss": _loss(lambda: nn.HuberLoss(delta=0.5), [X],
                       lambda: [_floats(2, 5)]),
    "KLDivLoss": _loss(lambda: nn.KLDivLoss(reduction="batchmean"), [X],
                       lambda: [torch.softmax(_floats(2, 5), 1)],
                       forward=_log_softmax(1)),
    "L1Loss": _loss(nn.L1Loss, [X], lambda: [_floats(2, 5)]),
    "MSELoss": _loss(nn.MSELoss, [X], lambda: [_floats(2, 5)]),
    "MarginRankingLoss": _loss(lambda: nn.MarginRankingLoss(0.1),
                               ["4", "4"], lambda: [_signs(4)]),
    "MultiLabelMarginLoss": _loss(
        nn.MultiLabelMarginLoss, ["2x4"],
        lambda: [torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1]])]),
    "MultiLabelSoftMarginLoss": _loss(nn.MultiLabelSoftMarginLoss, [X],
                                      lambda: [_ints(2, 5, high=2).float()]),
    "MultiMarginLoss": _loss(nn.MultiMarginLoss, [X],
                             lambda: [_ints(2, high=5)]),
    "NLLLoss": _loss(nn.NLLLoss, [X], lambda: [_ints(2, high=5)],
                     forward=_log_softmax(1)),
    "NLLLoss2d": _loss(nn.NLLLoss2d, ["2x3x4x4"],
                       lambda: [_ints(2, 4, 4, high=3)],
                       forward=_log_softmax(1)),
    "PoissonNLLLoss": _loss(nn.PoissonNLLLoss, [X],
                            lambda: [_floats(2, 5, low=0.0, high=3.0)]),
    "SmoothL1Loss": _loss(nn.SmoothL1Loss, [X], lambda: [_floats(2, 5)]),
    "SoftMarginLoss": _loss(nn.SoftMarginLoss, [X], lambda: [_signs(2, 5)]),
    "TripletMarginLoss": _loss(lambda: nn.TripletMarginLoss(margin=2.0),
                               ["2x8", "2x8", "2x8"], lambda: []),
    "TripletMarginWithDistanceLoss": _loss(
        lambda: nn.TripletMarginWithDistanceLoss(margin=2.0),
        ["2x8", "2x8", "2x8"], lambda: []),
}
