"""This file implements tofu-export's own lowerings of two composite PyTorch
functions whose ATen form cannot be traced over meta tensors or has no spec,
applied above autograd (a TorchFunctionMode), so that the backward pass is
that of the lowered form:

- `torch._weight_norm(v, g, dim)` (nn.utils.weight_norm; torchaudio's
  Wav2Vec2 positional convolution): PyTorch calls the fused
  `_weight_norm_interface` for dim 0 and the last dim; lowered to its
  unfused form `v * (g / norm_except_dim(v, 2, dim))`, which PyTorch uses
  for the other dims.
- `repeat_interleave(x, r, dim)` with a Python int `r` (torchaudio's
  WaveRNN upsampling): ATen builds a tensor of repeats and an index, whose
  size its meta kernel cannot know; lowered to
  `x.unsqueeze(dim+1).expand(..., r, ...).reshape(...)`, the same values.

Like decompose.py, a lowering applies only where the op type it replaces
has no spec in the library, and `--no-decompose` turns it off. meta.py
still registers Meta kernels for `_weight_norm_interface` and its backward,
so that models build (weight_norm computes the weight at construction) and
trace without the lowering.
"""

from typing import Callable, Dict, Optional

import torch
from torch.overrides import TorchFunctionMode

from tofu_export import (activation_lowerings, loss_lowerings, rnn_lowerings,
                         stft_lowerings)


def _weight_norm(v, g, dim=0):
    return v * (g / torch.norm_except_dim(v, 2, dim))


def _repeat_interleave(x, repeats, dim=None, *, output_size=None):
    if not isinstance(repeats, int) or isinstance(repeats, bool) or \
            not isinstance(x, torch.Tensor):
        return NotImplemented
    if dim is None:
        x, dim = x.flatten(), 0
    dim %= max(x.dim(), 1)
    shape = list(x.shape)
    wide = x.unsqueeze(dim + 1).expand(*shape[:dim + 1], repeats,
                                       *shape[dim + 1:])
    return wide.reshape(*shape[:dim], shape[dim] * repeats, *shape[dim + 1:])


# function -> (name for --stats, the op type it replaces, lowering)
LOWERINGS: Dict[Callable, tuple] = {
    torch._weight_norm: ("torch._weight_norm", "_weight_norm_interface__0",
                         _weight_norm),
    torch.repeat_interleave: ("torch.repeat_interleave",
                              "repeat_interleave_Tensor", _repeat_interleave),
    torch.Tensor.repeat_interleave: ("torch.repeat_interleave",
                                     "repeat_interleave_Tensor",
                                     _repeat_interleave),
}


# torch.nn's losses that cannot be traced as PyTorch writes them.
LOWERINGS.update(loss_lowerings.LOWERINGS)
# nn.RReLU's random slopes.
LOWERINGS.update(activation_lowerings.LOWERINGS)
# Packing padded sequences by lengths known at trace time.
LOWERINGS.update(rnn_lowerings.LOWERINGS)
# torch.stft / istft and the complex spectrogram between them (HDemucs).
LOWERINGS.update(stft_lowerings.LOWERINGS)


class LoweringMode(TorchFunctionMode):
    """Applies LOWERINGS whose op type `has_spec` says has no spec, counting
    each use in `counts` (name -> calls)."""

    def __init__(self, has_spec: Callable[[str], bool],
                 counts: Optional[dict] = None):
        super().__init__()
        self.active = {f: entry for f, entry in LOWERINGS.items()
                       if not has_spec(entry[1])}
        self.counts = counts if counts is not None else {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        entry = self.active.get(func)
        if entry is not None:
            result = entry[2](*args, **kwargs)
            if result is not NotImplemented:
                self.counts[entry[0]] = self.counts.get(entry[0], 0) + 1
                return result
        return func(*args, **kwargs)
