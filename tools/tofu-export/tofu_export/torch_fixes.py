"""Corrections of PyTorch CPU kernels that compute wrong values, installed
for the tools that compare a graph with PyTorch's own results (the replay,
run_graph.py, check-specs-against-torch.py, the catalogue). The exporter
itself traces on the meta device and never calls them.

gelu_backward: PyTorch 1.13's float32 CPU kernel for the exact GELU
(approximate='none') reads a non-contiguous grad_output as if it were
contiguous when `self` is contiguous, e.g. the gradient arriving through a
transpose after nn.GELU (torchaudio's Wav2Vec2 feature extractor): both
the eager step's gradients and a replay of the op then get values that
depend on memory the kernel should not read. It is replaced on the CPU
by the same formula written with elementwise ops, for both `approximate`
modes:

  none: grad * (Phi(x) + x * phi(x)), Phi(x) = (1 + erf(x / sqrt 2)) / 2,
        phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
  tanh: grad * (0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2)),
        t = tanh(k (x + c x^3)), k = sqrt(2 / pi), c = 0.044715
"""

import math
import warnings

import torch

_LIBRARY = None


def gelu_backward(grad, x, approximate="none"):
    if approximate == "tanh":
        k, c = math.sqrt(2.0 / math.pi), 0.044715
        t = torch.tanh(k * (x + c * x * x * x))
        return grad * (0.5 * (1 + t) +
                       0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x))
    cdf = 0.5 * (1 + torch.erf(x * math.sqrt(0.5)))
    pdf = torch.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)
    return grad * (cdf + x * pdf)


def install():
    """Registers the corrected kernels (once per process)."""
    global _LIBRARY
    if _LIBRARY is not None:
        return
    _LIBRARY = torch.library.Library("aten", "IMPL")
    with warnings.catch_warnings():  # "Overriding a previously registered
        warnings.simplefilter("ignore")  # kernel": intended
        _LIBRARY.impl("gelu_backward", gelu_backward, "CPU")
