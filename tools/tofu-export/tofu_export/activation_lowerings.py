"""Lowerings (lowerings.py's mechanism: above autograd, so the backward is
that of the lowered form) of nn.RReLU's function into ops the library has
specs for:

- `F.rrelu(x, lower, upper, training)` and `F.rrelu_` (nn.RReLU), and the
  `torch.rrelu` and `torch.rrelu_` they call: ATen's `rrelu_with_noise`
  draws a slope per element in training and writes it into a `noise`
  tensor that its schema does not mark as written (PyTorch 1.13), so a
  trace would show the backward reading the untouched zeros; it has no
  Meta kernel either. Lowered to what the kernel computes: slopes drawn uniformly from [lower, upper] (`uniform`, random,
  an opaque spec) where x <= 0 and 1 elsewhere (`le_Scalar`, `where_self`),
  and x times the slopes; the backward is grad_output times the same
  slopes. The draws are PyTorch's RNG's, not ATen's kernel's, so values
  agree in distribution only. Out of training, ATen's form is leaky_relu
  with slope (lower + upper) / 2, and so is the lowering.
"""

import torch
import torch.nn.functional as F


def _slopes(x, lower, upper, training):
    """ATen's slopes: drawn from [lower, upper] where x <= 0, else 1."""
    drawn = torch.empty_like(x).uniform_(lower, upper)
    return torch.where(x <= 0, drawn, torch.ones_like(x))


def _functional(x, lower=1.0 / 8, upper=1.0 / 3, training=False,
                inplace=False):
    if not isinstance(x, torch.Tensor):
        return NotImplemented
    if not training:
        return F.leaky_relu(x, (lower + upper) / 2, inplace=inplace)
    slopes = _slopes(x, lower, upper, training)
    return x.mul_(slopes) if inplace else x * slopes


def _functional_(x, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return _functional(x, lower, upper, training, inplace=True)


def _torch(x, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    if generator is not None:
        return NotImplemented
    return _functional(x, lower, upper, training)


def _torch_(x, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    if generator is not None:
        return NotImplemented
    return _functional(x, lower, upper, training, inplace=True)


# function -> (name for --stats, the op type it replaces, lowering)
# (F.rrelu is seen first: within a TorchFunctionMode's handler the mode is
# off, so the torch.rrelu it calls is not seen again.)
LOWERINGS = {
    F.rrelu: ("F.rrelu", "rrelu_with_noise", _functional),
    F.rrelu_: ("F.rrelu", "rrelu_with_noise", _functional_),
    torch.rrelu: ("F.rrelu", "rrelu_with_noise", _torch),
    torch.rrelu_: ("F.rrelu", "rrelu_with_noise", _torch_),
}
