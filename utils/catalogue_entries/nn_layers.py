"""Every layer class torch.nn exports, at a small size: the catalogue's
`nn` family (losses are in nn_losses.py). `uncatalogued()` lists the
torch.nn module classes that are neither here, in nn_losses.py nor in
EXCLUDED, so that a new PyTorch's new layer shows up as a failure.
"""

import inspect

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import Case

# torch.nn module classes that are not layers a step trains, and why.
EXCLUDED = {
    "Module": "the base class",
    "Container": "deprecated base class of containers",
    "Sequential": "container: runs the layers it holds",
    "ModuleList": "container: holds layers, no forward",
    "ModuleDict": "container: holds layers, no forward",
    "ParameterList": "container: holds parameters, no forward",
    "ParameterDict": "container: holds parameters, no forward",
    "RNNBase": "abstract base of RNN, LSTM and GRU",
    "RNNCellBase": "abstract base of RNNCell, LSTMCell and GRUCell",
    "DataParallel": "multi-device wrapper of another module",
    "SyncBatchNorm": "BatchNorm across a process group (needs CUDA and "
                     "torch.distributed); its math is BatchNorm's",
    "ChannelShuffle": "does not train in PyTorch 1.13: eager backward fails "
                      "with 'derivative for channel_shuffle is not "
                      "implemented'",
}
LAZY_REASON = "Lazy*: becomes the non-lazy class on its first call"


def _seq(*shape):
    return "x".join(map(str, shape))


def _unpool(pool, unpool_args):
    """Max pooling with indices, then the unpooling layer under test."""
    return lambda m, x: m(*pool(x, *unpool_args, return_indices=True))


def _first(m, *xs):
    return m(*xs)[0]


def _self_attention(m, x):
    return m(x, x, x, need_weights=False)[0]


def _encoder_layer():
    return nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0,
                                      batch_first=True)


def _decoder_layer():
    return nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0,
                                      batch_first=True)


def _c(build, *inputs, forward=None, random=False):
    return Case(build=build, inputs=list(inputs), forward=forward,
                random=random)


X2 = _seq(2, 8)            # features
X3 = _seq(2, 4, 9)         # N, C, L
X4 = _seq(2, 4, 6, 6)      # N, C, H, W
X5 = _seq(2, 2, 4, 6, 6)   # N, C, D, H, W

CASES = {
    "AdaptiveAvgPool1d": _c(lambda: nn.AdaptiveAvgPool1d(4), X3),
    "AdaptiveAvgPool2d": _c(lambda: nn.AdaptiveAvgPool2d((4, 3)), X4),
    "AdaptiveAvgPool3d": _c(lambda: nn.AdaptiveAvgPool3d((3, 4, 4)), X5),
    "AdaptiveMaxPool1d": _c(lambda: nn.AdaptiveMaxPool1d(4), X3),
    "AdaptiveMaxPool2d": _c(lambda: nn.AdaptiveMaxPool2d((4, 3)), X4),
    "AdaptiveMaxPool3d": _c(lambda: nn.AdaptiveMaxPool3d((3, 4, 4)), X5),
    "AlphaDropout": _c(lambda: nn.AlphaDropout(0.2), X2, random=True),
    "AvgPool1d": _c(lambda: nn.AvgPool1d(3, 2, 1), X3),
    "AvgPool2d": _c(lambda: nn.AvgPool2d(3, 2, 1, ceil_mode=True), X4),
    "AvgPool3d": _c(lambda: nn.AvgPool3d(2), X5),
    "BatchNorm1d": _c(lambda: nn.BatchNorm1d(4), X3),
    "BatchNorm2d": _c(lambda: nn.BatchNorm2d(4), X4),
    "BatchNorm3d": _c(lambda: nn.BatchNorm3d(2), X5),
    "Bilinear": _c(lambda: nn.Bilinear(5, 6, 3), _seq(2, 5), _seq(2, 6)),
    "CELU": _c(lambda: nn.CELU(0.5), X2),
    "ConstantPad1d": _c(lambda: nn.ConstantPad1d((1, 2), 0.5), X3),
    "ConstantPad2d": _c(lambda: nn.ConstantPad2d((1, 2, 0, 1), 0.5), X4),
    "ConstantPad3d": _c(lambda: nn.ConstantPad3d(1, 0.5), X5),
    "Conv1d": _c(lambda: nn.Conv1d(4, 3, 3, padding=1), X3),
    "Conv2d": _c(lambda: nn.Conv2d(4, 3, 3, stride=2, padding=1), X4),
    "Conv3d": _c(lambda: nn.Conv3d(2, 3, 3, padding=1), X5),
    "ConvTranspose1d": _c(lambda: nn.ConvTranspose1d(4, 3, 3, stride=2), X3),
    "ConvTranspose2d": _c(lambda: nn.ConvTranspose2d(
        4, 3, 3, stride=2, padding=1, output_padding=1), X4),
    "ConvTranspose3d": _c(lambda: nn.ConvTranspose3d(2, 3, 3, stride=2), X5),
    "CosineSimilarity": _c(lambda: nn.CosineSimilarity(dim=1), X2, X2),
    "CrossMapLRN2d": _c(lambda: nn.CrossMapLRN2d(3), X4),
    "Dropout": _c(lambda: nn.Dropout(0.5), X2, random=True),
    "Dropout1d": _c(lambda: nn.Dropout1d(0.5), X3, random=True),
    "Dropout2d": _c(lambda: nn.Dropout2d(0.5), X4, random=True),
    "Dropout3d": _c(lambda: nn.Dropout3d(0.5), X5, random=True),
    "ELU": _c(lambda: nn.ELU(), X2),
    "Embedding": _c(lambda: nn.Embedding(10, 4), "2x5:i64"),
    "EmbeddingBag": _c(lambda: nn.EmbeddingBag(10, 4, mode="mean"),
                       "2x5:i64"),
    "FeatureAlphaDropout": _c(lambda: nn.FeatureAlphaDropout(0.2), X4,
                              random=True),
    "Flatten": _c(lambda: nn.Flatten(), X4),
    # 3 channels of 2x2 patches, 3x4 of them: a 4x5 image (stride 1)
    "Fold": _c(lambda: nn.Fold((4, 5), 2), _seq(2, 12, 12)),
    "FractionalMaxPool2d": _c(lambda: nn.FractionalMaxPool2d(
        2, output_size=3), X4, random=True),
    "FractionalMaxPool3d": _c(lambda: nn.FractionalMaxPool3d(
        2, output_size=(2, 3, 3)), X5, random=True),
    "GELU": _c(lambda: nn.GELU(), X2),
    "GLU": _c(lambda: nn.GLU(), X2),
    "GRU": _c(lambda: nn.GRU(4, 6, batch_first=True), _seq(2, 5, 4)),
    "GRUCell": _c(lambda: nn.GRUCell(4, 6), _seq(2, 4)),
    "GroupNorm": _c(lambda: nn.GroupNorm(2, 4), X4),
    "Hardshrink": _c(lambda: nn.Hardshrink(0.3), X2),
    "Hardsigmoid": _c(lambda: nn.Hardsigmoid(), X2),
    "Hardswish": _c(lambda: nn.Hardswish(), X2),
    "Hardtanh": _c(lambda: nn.Hardtanh(-0.5, 0.5), X2),
    "Identity": _c(lambda: nn.Identity(), X2),
    "InstanceNorm1d": _c(lambda: nn.InstanceNorm1d(4, affine=True), X3),
    "InstanceNorm2d": _c(lambda: nn.InstanceNorm2d(4, affine=True), X4),
    "InstanceNorm3d": _c(lambda: nn.InstanceNorm3d(2, affine=True), X5),
    "LPPool1d": _c(lambda: nn.LPPool1d(2, 3, 2), X3),
    "LPPool2d": _c(lambda: nn.LPPool2d(2, 2), X4),
    "LSTM": _c(lambda: nn.LSTM(4, 6, batch_first=True), _seq(2, 5, 4),
               forward=_first),
    "LSTMCell": _c(lambda: nn.LSTMCell(4, 6), _seq(2, 4)),
    "LayerNorm": _c(lambda: nn.LayerNorm([6, 6]), X4),
    "LeakyReLU": _c(lambda: nn.LeakyReLU(0.1), X2),
    "Linear": _c(lambda: nn.Linear(8, 4), X2),
    "LocalResponseNorm": _c(lambda: nn.LocalResponseNorm(3), X4),
    "LogSigmoid": _c(lambda: nn.LogSigmoid(), X2),
    "LogSoftmax": _c(lambda: nn.LogSoftmax(dim=1), X2),
    "MaxPool1d": _c(lambda: nn.MaxPool1d(3, 2, 1), X3),
    "MaxPool2d": _c(lambda: nn.MaxPool2d(3, 2, 1, ceil_mode=True), X4),
    "MaxPool3d": _c(lambda: nn.MaxPool3d(2), X5),
    "MaxUnpool1d": _c(lambda: nn.MaxUnpool1d(2), X3,
                      forward=_unpool(F.max_pool1d, (2,))),
    "MaxUnpool2d": _c(lambda: nn.MaxUnpool2d(2), X4,
                      forward=_unpool(F.max_pool2d, (2,))),
    "MaxUnpool3d": _c(lambda: nn.MaxUnpool3d(2), X5,
                      forward=_unpool(F.max_pool3d, (2,))),
    "Mish": _c(lambda: nn.Mish(), X2),
    "MultiheadAttention": _c(lambda: nn.MultiheadAttention(
        8, 2, batch_first=True), _seq(2, 5, 8), forward=_self_attention),
    "PReLU": _c(lambda: nn.PReLU(4), X3),
    "PairwiseDistance": _c(lambda: nn.PairwiseDistance(), X2, X2),
    "PixelShuffle": _c(lambda: nn.PixelShuffle(2), X4),
    "PixelUnshuffle": _c(lambda: nn.PixelUnshuffle(2), X4),
    "RNN": _c(lambda: nn.RNN(4, 6, batch_first=True), _seq(2, 5, 4)),
    "RNNCell": _c(lambda: nn.RNNCell(4, 6), _seq(2, 4)),
    "RReLU": _c(lambda: nn.RReLU(), X2, random=True),
    "ReLU": _c(lambda: nn.ReLU(), X2),
    "ReLU6": _c(lambda: nn.ReLU6(), X2),
    "ReflectionPad1d": _c(lambda: nn.ReflectionPad1d((1, 2)), X3),
    "ReflectionPad2d": _c(lambda: nn.ReflectionPad2d((1, 2, 0, 1)), X4),
    "ReflectionPad3d": _c(lambda: nn.ReflectionPad3d(1), X5),
    "ReplicationPad1d": _c(lambda: nn.ReplicationPad1d((1, 2)), X3),
    "ReplicationPad2d": _c(lambda: nn.ReplicationPad2d((1, 2, 0, 1)), X4),
    "ReplicationPad3d": _c(lambda: nn.ReplicationPad3d(1), X5),
    "SELU": _c(lambda: nn.SELU(), X2),
    "SiLU": _c(lambda: nn.SiLU(), X2),
    "Sigmoid": _c(lambda: nn.Sigmoid(), X2),
    "Softmax": _c(lambda: nn.Softmax(dim=1), X2),
    "Softmax2d": _c(lambda: nn.Softmax2d(), X4),
    "Softmin": _c(lambda: nn.Softmin(dim=1), X2),
    "Softplus": _c(lambda: nn.Softplus(beta=2.0), X2),
    "Softshrink": _c(lambda: nn.Softshrink(0.3), X2),
    "Softsign": _c(lambda: nn.Softsign(), X2),
    "Tanh": _c(lambda: nn.Tanh(), X2),
    "Tanhshrink": _c(lambda: nn.Tanhshrink(), X2),
    "Threshold": _c(lambda: nn.Threshold(0.1, 2.0), X2),
    "Transformer": _c(lambda: nn.Transformer(
        8, 2, 1, 1, 16, dropout=0.0, batch_first=True),
        _seq(2, 5, 8), _seq(2, 4, 8)),
    "TransformerDecoder": _c(lambda: nn.TransformerDecoder(
        _decoder_layer(), 1), _seq(2, 4, 8), _seq(2, 5, 8)),
    "TransformerDecoderLayer": _c(_decoder_layer, _seq(2, 4, 8),
                                  _seq(2, 5, 8)),
    "TransformerEncoder": _c(lambda: nn.TransformerEncoder(
        _encoder_layer(), 1, enable_nested_tensor=False), _seq(2, 5, 8)),
    "TransformerEncoderLayer": _c(_encoder_layer, _seq(2, 5, 8)),
    "Unflatten": _c(lambda: nn.Unflatten(1, (2, 4)), X2),
    "Unfold": _c(lambda: nn.Unfold(2, padding=1, stride=2), X4),
    "Upsample": _c(lambda: nn.Upsample(scale_factor=2, mode="bilinear"), X4),
    "UpsamplingBilinear2d": _c(lambda: nn.UpsamplingBilinear2d(
        scale_factor=2), X4),
    "UpsamplingNearest2d": _c(lambda: nn.UpsamplingNearest2d(
        scale_factor=2), X4),
    "ZeroPad2d": _c(lambda: nn.ZeroPad2d((1, 1, 2, 0)), X4),
}


def torch_nn_classes():
    """The names of every nn.Module subclass torch.nn exports."""
    return sorted(n for n, c in vars(nn).items()
                  if inspect.isclass(c) and issubclass(c, torch.nn.Module))


def excluded():
    """NAME -> why it is not a catalogue entry."""
    lazy = {n: LAZY_REASON for n in torch_nn_classes()
            if n.startswith("Lazy")}
    return {**EXCLUDED, **lazy}


def uncatalogued(loss_names):
    """torch.nn classes that have no entry and no exclusion."""
    known = set(CASES) | set(loss_names) | set(excluded())
    return [n for n in torch_nn_classes() if n not in known]
