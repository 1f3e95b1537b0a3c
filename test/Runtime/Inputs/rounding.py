"""Emulated 16-bit tensors for PyTorch's CPU kernels (precision_vs_torch.py).

PyTorch 1.13 has no CPU kernels for most float16 ops (addmm, relu). Under
RoundingMode every ATen op (forward and backward: a TorchDispatchMode, below
autograd) runs on float32 copies of its 16-bit arguments, and a result that
PyTorch's type promotion would make 16-bit (every floating-point argument
16-bit, 0-dim ones aside, or a `dtype=` of the 16-bit type) is rounded to it
and stored in it. That is what a 16-bit kernel computing in float and
rounding each result does.

With `compute=torch.float64` the float32 arguments are widened too, so each
op computes in double and its result is rounded once to the dtype it would
have (16-bit or float32): tofu's kernels' arithmetic (docs/Runtime.md,
"16-bit tensors"). In-place ops (autograd's gradient accumulation) run
unchanged: one float32 addition rounds as a double one rounded to float32.
"""

import contextlib

import torch
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode


class _Dispatch(TorchDispatchMode):
    def __init__(self, low, compute):
        super().__init__()
        self.low = low
        self.compute = compute

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        low = self.low
        if self.compute == torch.float64 and func._schema.is_mutable:
            return func(*args, **kwargs)
        flat, _ = pytree.tree_flatten((args, kwargs))
        floats = [a for a in flat
                  if isinstance(a, torch.Tensor) and a.is_floating_point()]
        # The dtype of the floating-point results: `low` (wanted), else
        # float32 where float64 only stands in for it.
        if "dtype" in kwargs and kwargs["dtype"] is not None:
            want = kwargs["dtype"] == low
            single = kwargs["dtype"] == torch.float32
            if want or single:
                kwargs = dict(kwargs, dtype=self.compute)
        else:
            big = [a for a in floats if a.dim() > 0] or floats
            want = bool(big) and all(a.dtype == low for a in big)
            single = bool(big) and all(a.dtype in (low, torch.float32)
                                       for a in big)
        wide = (low, torch.float32) if self.compute == torch.float64 \
            else (low,)

        def widen(a):
            if isinstance(a, torch.Tensor) and a.dtype in wide:
                return a.to(self.compute)
            return a
        args, kwargs = pytree.tree_map(widen, (args, kwargs))
        out = func(*args, **kwargs)
        result = low if want else torch.float32 if single else None
        if result is None:
            return out
        return pytree.tree_map(
            lambda t: t.to(result) if isinstance(t, torch.Tensor)
            and t.is_floating_point() else t, out)


@contextlib.contextmanager
def RoundingMode(low, function_mode=None, compute=torch.float32):
    """Emulate `low` tensors, computing in `compute` (float32 or float64);
    `function_mode` (e.g. tofu-export's AutocastMode) is entered inside, so
    its casts are emulated too."""
    with _Dispatch(low, compute):
        if function_mode is None:
            yield
        else:
            with function_mode:
                yield
