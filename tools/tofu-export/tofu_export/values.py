"""This file implements the values tofu-export knows while it traces over
meta tensors, and the one error for a step that needs values it does not
know (docs/Export.md, "Inputs given as values").

The trace computes shapes only. A model may still read values that are
fixed by the command line: an input given as values (`--input
lengths=2:i64=[5,3]`, Conformer's lengths that only size a padding mask),
a real (non-meta) tensor the model creates, and what small ops compute from
those. `ValueMode` sits in front of the tracer: for every op whose tensor
arguments all have known values, it computes the op on the values too (CPU,
outputs of at most LIMIT elements) and remembers the result, so that
`.item()` of `torch.max(lengths)` is a Python number and `arange(5) >=
lengths.unsqueeze(1)` is traced with known values. `repeat_interleave` with
known repeats gets its `output_size`, which its meta kernel needs.

Integer results computed from inputs given as values (`torch.max(lengths)`,
`lengths // 2 + 1`, an i64 -> i32 copy) are written on their FX node
(`tofu_value`): the graph builder folds them into constants of the step
(graph.py), so that arithmetic on lengths known at trace time is no op of
the graph.

An op that needs values nobody knows (`.item()`, a branch on a tensor,
`nonzero`, ...: ATen's `data_dependent_output` and `dynamic_output_shape`
tags) is a DataDependentError naming the op, the module and the model's
source line, instead of a traceback from deep in PyTorch.
"""

from typing import Optional

import torch
import torch.utils._pytree as pytree
from torch.utils._mode_utils import no_dispatch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.fx.experimental import proxy_tensor as pt

from . import meta_fallback, trace
from .errors import ModelError

# Largest output (elements) computed on values.
LIMIT = 1 << 16
# Largest integer result from given values folded into a constant.
FOLD_LIMIT = 4096
_FOLDED_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8,
                  torch.uint8)

_DATA = torch.Tag.data_dependent_output
_DYNAMIC = torch.Tag.dynamic_output_shape
_RANDOM = torch.Tag.nondeterministic_seeded

# What reading a value looks like in model code, by ATen op.
_READS = {"_local_scalar_dense": "`.item()`, `int(t)`, `float(t)` or `if t:`",
          "is_nonzero": "`if t:`", "equal": "`torch.equal`"}


class DataDependentError(ModelError):
    """The step reads tensor values that are not known while tracing."""


class KnownValues:
    """Values of meta tensors, by tensor identity (the tensors are kept
    alive, so an id is never reused while it is recorded)."""

    def __init__(self, recorder: Optional[trace.Recorder] = None):
        self.recorder = recorder  # modules and lines for messages
        self._values = {}
        self._given = set()  # ids: given as values or computed from them

    def set(self, t: torch.Tensor, value: torch.Tensor,
            given: bool = False) -> None:
        """`given`: an input given as values, or computed from one."""
        self._values[id(t)] = (t, value)
        if given:
            self._given.add(id(t))
        else:
            self._given.discard(id(t))

    def is_given(self, t: torch.Tensor) -> bool:
        return id(t) in self._given and self.get(t) is not None

    def get(self, t: torch.Tensor) -> Optional[torch.Tensor]:
        """The value of `t`; a real tensor is its own value."""
        if not t.is_meta:
            return t
        entry = self._values.get(id(t))
        return entry[1] if entry is not None and entry[0] is t else None

    def forget(self, t: torch.Tensor) -> None:
        self._values.pop(id(t), None)
        self._given.discard(id(t))
        if t._base is not None:
            self._values.pop(id(t._base), None)
            self._given.discard(id(t._base))

    def where(self) -> str:
        """` in module 'path' (Class) at file:line` of the running code."""
        text = ""
        rec = self.recorder
        if rec is not None:
            text += " in module " + rec.module_label(
                rec.modules[-1] if rec.modules else "")
        line = trace.user_line()
        return text + (f" at {line}" if line else "")


def _real(x):
    """A device argument for the computation on values."""
    if isinstance(x, torch.device) and x.type == "meta":
        return torch.device("cpu")
    return x


def _tensors(args, kwargs):
    """The tensor arguments of an ATen call (ATen nests them at most one
    list deep); faster than a pytree flatten on every op."""
    found = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, torch.Tensor):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(x for x in a if isinstance(x, torch.Tensor))
    return found


def _mutates(func) -> bool:
    args = func._schema.arguments
    return bool(args) and args[0].alias_info is not None and \
        args[0].alias_info.is_write


class ValueMode(TorchDispatchMode):
    """Computes ops on known values beside the trace (see the module doc)."""

    def __init__(self, known: KnownValues):
        super().__init__()
        self.known = known

    def __enter__(self):
        meta_fallback.value_of = self.known.get
        return super().__enter__()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tensors = _tensors(args, kwargs)
        values = {id(t): self.known.get(t) for t in tensors}
        known = all(v is not None for v in values.values())
        if _DATA in func.tags or _DYNAMIC in func.tags:
            return self._value_dependent(func, args, kwargs, values, known)
        if tensors and func is torch.ops.aten._to_copy.default \
                and kwargs.get("device") is not None and \
                torch.device(kwargs["device"]).type != "meta":
            # a tensor copied to a real device (`lengths.cpu()`, as
            # pack_padded_sequence does, `.tolist()`): a known one is its
            # value, a constant from now on
            if known:
                return self._compute(func, args, kwargs, values)
            raise self._error("_to_copy", "`.cpu()`, `.tolist()` or "
                              "`.numpy()`")
        try:
            out = func(*args, **kwargs)
        except NotImplementedError as e:
            if not meta_fallback.is_missing_meta_kernel(e) or \
                    not meta_fallback.register(func):
                raise
            try:
                out = func(*args, **kwargs)
            except Exception as e2:
                raise ModelError(
                    f"{func} has no Meta kernel in PyTorch "
                    f"{torch.__version__}, and running its CPU kernel for "
                    f"the output shapes failed{self.known.where()}: "
                    f"{type(e2).__name__}: "
                    f"{str(e2).strip().splitlines()[0]}") from None
        if _RANDOM in func.tags or not known:
            if _mutates(func) and isinstance(args[0], torch.Tensor):
                self.known.forget(args[0])
            return out
        self._record(func, args, kwargs, values, out)
        return out

    def _error(self, name: str, what: str) -> DataDependentError:
        return DataDependentError(
            f"the model reads tensor values (aten.{name}: {what})"
            f"{self.known.where()}; tofu-export traces shapes, not "
            "values: only inputs given as values "
            "(--input NAME=SHAPE:DTYPE=[...]) and what is computed from "
            "them can be read")

    def _compute(self, func, args, kwargs, values):
        r_args, r_kwargs = pytree.tree_map(
            lambda x: values[id(x)] if isinstance(x, torch.Tensor)
            else _real(x), (args, kwargs))
        with no_dispatch():
            return func(*r_args, **r_kwargs)

    def _record(self, func, args, kwargs, values, out) -> None:
        outs = [t for t in pytree.tree_flatten(out)[0]
                if isinstance(t, torch.Tensor)]
        if not outs or any(not t.is_meta or t.numel() > LIMIT
                           for t in outs):
            return
        try:
            result = self._compute(func, args, kwargs, values)
        except Exception:  # no CPU kernel for it, say: the value is unknown
            return
        results = [t for t in pytree.tree_flatten(result)[0]
                   if isinstance(t, torch.Tensor)]
        given = any(self.known.is_given(t) for t in _tensors(args, kwargs))
        if len(results) == len(outs):
            for t, v in zip(outs, results):
                if tuple(t.shape) == tuple(v.shape):
                    self.known.set(t, v, given)
                    if given and v.dtype in _FOLDED_DTYPES and \
                            v.numel() <= FOLD_LIMIT:
                        _note_value(t, v)

    def _value_dependent(self, func, args, kwargs, values, known):
        """An op whose output (a value, or its shape) depends on values:
        computed on known values; else run as usual (an index with integer
        indices is fine on meta), and if that fails, the error."""
        name = func.overloadpacket.__name__
        if known and _DATA in func.tags:
            return self._compute(func, args, kwargs, values)  # a number
        if known and name == "repeat_interleave" and \
                kwargs.get("output_size") is None:
            result = self._compute(func, args, kwargs, values)
            out = func(*args, **kwargs, output_size=int(result.shape[0]))
            self.known.set(out, result, any(
                self.known.is_given(t) for t in _tensors(args, kwargs)))
            return out
        try:
            out = func(*args, **kwargs)
        except Exception:
            raise self._error(name, _READS.get(
                name, "an op whose output shape depends on them")) from None
        if known:
            self._record(func, args, kwargs, values, out)
        return out


def _note_value(t: torch.Tensor, value: torch.Tensor) -> None:
    """Writes `value` on the FX node the tracer recorded for `t`
    (`tofu_value`), when the op is being traced."""
    slots = t.__dict__.get(pt.proxy_slot)
    for tracked in (slots or {}).values():
        tracked.proxy.node.meta["tofu_value"] = value
