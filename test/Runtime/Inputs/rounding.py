"""Emulated 16-bit tensors for PyTorch's CPU kernels (precision_vs_torch.py).

PyTorch 1.13 has no CPU kernels for most float16 ops (addmm, relu). Under
RoundingMode every ATen op (forward and backward: a TorchDispatchMode, below
autograd) runs on float32 copies of its 16-bit arguments, and a result that
PyTorch's type promotion would make 16-bit (every floating-point argument
16-bit, 0-dim ones aside, or a `dtype=` of the 16-bit type) is rounded to it
and stored in it. That is what a 16-bit kernel computing in float and
rounding each result does.
"""

import contextlib

import torch
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode


class _Dispatch(TorchDispatchMode):
    def __init__(self, low):
        super().__init__()
        self.low = low

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        low = self.low
        flat, _ = pytree.tree_flatten((args, kwargs))
        floats = [a for a in flat
                  if isinstance(a, torch.Tensor) and a.is_floating_point()]
        if "dtype" in kwargs and kwargs["dtype"] is not None:
            want = kwargs["dtype"] == low
            if want:
                kwargs = dict(kwargs, dtype=torch.float32)
        else:
            big = [a for a in floats if a.dim() > 0] or floats
            want = bool(big) and all(a.dtype == low for a in big)

        def widen(a):
            if isinstance(a, torch.Tensor) and a.dtype == low:
                return a.float()
            return a
        args, kwargs = pytree.tree_map(widen, (args, kwargs))
        out = func(*args, **kwargs)
        if not want:
            return out
        return pytree.tree_map(
            lambda t: t.to(low) if isinstance(t, torch.Tensor)
            and t.is_floating_point() else t, out)


@contextlib.contextmanager
def RoundingMode(low, function_mode=None):
    """Emulate `low` tensors; `function_mode` (e.g. tofu-export's
    AutocastMode) is entered inside, so its casts are emulated too."""
    with _Dispatch(low):
        if function_mode is None:
            yield
        else:
            with function_mode:
                yield
