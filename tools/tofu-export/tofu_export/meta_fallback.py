"""This file implements the fallback for ATen ops that PyTorch 1.13 has no
Meta kernel for and meta.py has not written one for: when such an op is
called while tofu-export traces (values.py sees the NotImplementedError), a
Meta kernel is registered for it that runs the op's CPU kernel on stand-ins
of its meta arguments (their known values where values.py has them, zeros
otherwise) and returns meta tensors of the results' shapes and dtypes; the
call is then retried. Stand-ins are limited to FALLBACK_LIMIT elements in
all; an op whose CPU kernel fails on them (or that is larger) stays an
error, which names the op, the module and the model's source line.

The result's shape must not depend on the values: ops whose output shape
does (ATen's `dynamic_output_shape` tag) never get here (values.py).
"""

from typing import Callable, Optional

import torch
import torch.utils._pytree as pytree
from torch.utils._mode_utils import no_dispatch

# Most elements of all stand-ins of one call (64 Mi: 256 MiB of f32).
FALLBACK_LIMIT = 1 << 26

_LIBRARY = None
_REGISTERED = set()

# The known values of the trace in progress (values.ValueMode sets it).
value_of: Callable[[torch.Tensor], Optional[torch.Tensor]] = \
    lambda t: None


def _kernel(op):
    def kernel(*args, **kwargs):
        def stand_in(x):
            if isinstance(x, torch.Tensor) and x.is_meta:
                v = value_of(x)
                return v if v is not None else torch.zeros(
                    x.shape, dtype=x.dtype)
            if isinstance(x, torch.device) and x.type == "meta":
                return torch.device("cpu")
            return x
        metas = [x for x in pytree.tree_flatten((args, kwargs))[0]
                 if isinstance(x, torch.Tensor) and x.is_meta]
        if sum(x.numel() for x in metas) > FALLBACK_LIMIT:
            raise NotImplementedError(
                f"{op} has no Meta kernel, and its inputs are too large to "
                "run its CPU kernel for the output shapes")
        real_args, real_kwargs = pytree.tree_map(stand_in, (args, kwargs))
        with no_dispatch():
            out = op(*real_args, **real_kwargs)
        return pytree.tree_map(
            lambda t: torch.empty(t.shape, dtype=t.dtype, device="meta")
            if isinstance(t, torch.Tensor) else t, out)
    return kernel


def register(op) -> bool:
    """Register the fallback Meta kernel of OpOverload `op` (once); False if
    it has one already (the error was something else)."""
    global _LIBRARY
    name = op._schema.name.split("::")[-1]
    if op._overloadname != "default":
        name += "." + op._overloadname
    if name in _REGISTERED:
        return False
    if _LIBRARY is None:
        _LIBRARY = torch.library.Library("aten", "IMPL", "Meta")
    _LIBRARY.impl(name, _kernel(op))
    _REGISTERED.add(name)
    return True


def is_missing_meta_kernel(e: Exception) -> bool:
    return isinstance(e, NotImplementedError) and "'Meta' backend" in str(e)
