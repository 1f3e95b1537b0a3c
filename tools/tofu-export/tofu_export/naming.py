"""This file implements the mapping from ATen operator calls to tofu-graph
operator types: the `type` name, the tensor `inputs` (in schema order, with
absent optional tensors and unread tensors left out) and the non-tensor
`params`. The rules are documented in docs/OperatorLibrary.md ("Naming") and
docs/Export.md; this module is their single implementation.
"""

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import torch

from . import strided

# ATen ops that are the identity on logical (layout-free) tensors: they are
# elided and their output is another name for their input.
ALIAS_OPS = {"detach", "alias", "lift_fresh", "lift_fresh_copy", "clone",
             "contiguous"}

# Random ops (specs/random.tdl, docs/Export.md "Random ops"): (packet,
# overload) -> (type, the tensor arguments it reads, {param: schema argument
# or a fixed value}). In-place fills and `_like` factories ignore their
# input's values and factories take a size: both become ops that read no
# tensor; random_ops.py adds the seed, the stream, the shape and the step.
RANDOM_OPS = {
    ("bernoulli_", "float"): ("bernoulli", (), {"p": "p"}),
    ("bernoulli", "p"): ("bernoulli", (), {"p": "p"}),
    ("bernoulli", "default"): ("bernoulli_probs", ("self",), {}),
    ("uniform_", "default"): ("uniform", (), {"from": "from", "to": "to"}),
    ("rand", "default"): ("uniform", (), {"from": 0.0, "to": 1.0}),
    ("rand_like", "default"): ("uniform", (), {"from": 0.0, "to": 1.0}),
    ("normal_", "default"): ("normal", (), {"mean": "mean", "std": "std"}),
    ("randn", "default"): ("normal", (), {"mean": 0.0, "std": 1.0}),
    ("randn_like", "default"): ("normal", (), {"mean": 0.0, "std": 1.0}),
    ("normal", "float_float"): ("normal", (), {"mean": "mean", "std": "std"}),
    ("normal", "Tensor_float"): ("normal_Tensor_float", ("mean",),
                                 {"std": "std"}),
    ("normal", "float_Tensor"): ("normal_float_Tensor", ("std",),
                                 {"mean": "mean"}),
    ("normal", "Tensor_Tensor"): ("normal_Tensor_Tensor", ("mean", "std"),
                                  {}),
    ("randint", "low"): ("randint", (), {"low": "low", "high": "high"}),
    ("randint", "default"): ("randint", (), {"low": 0, "high": "high"}),
    ("randint_like", "default"): ("randint", (), {"low": 0, "high": "high"}),
    ("randint_like", "low_dtype"): ("randint", (),
                                    {"low": "low", "high": "high"}),
    ("exponential_", "default"): ("exponential", (), {"lambd": "lambd"}),
}

# Reshapes of a contiguous logical tensor: all become `view` (params size_i).
VIEW_OPS = {"view", "_unsafe_view", "_reshape_alias", "reshape"}

# Ops that produce a constant-filled tensor from at most a shape: all become
# `full` with a single `value` param and no inputs.
FILL_OPS = {
    "ones_like": 1.0, "zeros_like": 0.0, "ones": 1.0, "zeros": 0.0,
    "new_ones": 1.0, "new_zeros": 0.0, "empty_like": 0.0, "empty": 0.0,
    "new_empty": 0.0, "full_like": None, "full": None, "new_full": None,
    "scalar_tensor": None, "zero": 0.0, "zero_": 0.0, "fill": None,
    "fill_": None,
}

# Non-tensor arguments that never become params: they are reflected in the
# tensors' dtypes and shapes, or (output_mask) in which outputs exist.
DROPPED_ARGS = {"dtype", "layout", "device", "pin_memory", "memory_format",
                "output_mask", "input_dtype", "non_blocking", "copy"}

# Tensor arguments each output actually reads, for ops whose outputs read
# fewer tensors than the schema passes (shape-only arguments, outputs that do
# not depend on every input). Keyed by (packet, overload); one tuple of
# argument names per output. `when` restricts an entry to calls whose named
# bool param has the given value.
READS = {
    ("native_batch_norm", "default"): dict(
        when=("training", True),
        outputs=[("input", "weight", "bias"), ("input",), ("input",)]),
    ("native_batch_norm_backward", "default"): dict(
        when=("train", True),
        outputs=[("grad_out", "input", "weight", "save_mean", "save_invstd"),
                 ("grad_out", "input", "save_mean", "save_invstd"),
                 ("grad_out",)]),
    ("convolution_backward", "default"): dict(
        outputs=[("grad_output", "weight"), ("grad_output", "input"),
                 ("grad_output",)]),
    ("native_layer_norm", "default"): dict(
        outputs=[("input", "weight", "bias"), ("input",), ("input",)]),
    ("native_layer_norm_backward", "default"): dict(
        outputs=[("grad_out", "input", "mean", "rstd", "weight"),
                 ("grad_out", "input", "mean", "rstd"), ("grad_out",)]),
    ("nll_loss_forward", "default"): dict(
        outputs=[("self", "target", "weight"), ("target", "weight")]),
    ("nll_loss_backward", "default"): dict(
        outputs=[("grad_output", "target", "weight", "total_weight")]),
    ("nll_loss2d_forward", "default"): dict(
        outputs=[("self", "target", "weight"), ("target", "weight")]),
    ("nll_loss2d_backward", "default"): dict(
        outputs=[("grad_output", "target", "weight", "total_weight")]),
    ("native_dropout_backward", "default"): dict(
        outputs=[("grad_output", "mask")]),
    # nn.EmbeddingBag (specs/embedding.tdl): the bag of each index
    # (offset2bag) and the bag sizes depend only on indices and offsets;
    # each mode's backward reads what its math needs (sum: the rows' bags,
    # mean: also the sizes, max: the sizes and the argmax rows).
    ("_embedding_bag", "default"): dict(
        outputs=[("weight", "indices", "offsets", "per_sample_weights"),
                 ("indices", "offsets"), ("indices", "offsets"),
                 ("weight", "indices", "offsets")]),
    ("_embedding_bag_dense_backward", "default"): [
        dict(when=("mode", 0), outputs=[
            ("grad", "indices", "offset2bag", "per_sample_weights")]),
        dict(when=("mode", 1), outputs=[
            ("grad", "indices", "offset2bag", "bag_size")]),
        dict(when=("mode", 2), outputs=[
            ("grad", "bag_size", "maximum_indices")])],
    ("_embedding_bag_per_sample_weights_backward", "default"): dict(
        outputs=[("grad", "weight", "indices", "offset2bag")]),
}


@dataclass
class OpCall:
    """One ATen call in canonical form, before it is split per output."""

    base: str  # type name without the per-output suffix
    tensors: List[Tuple[str, Any]]  # (schema arg name, FX node) present
    params: Dict[str, Any] = field(default_factory=dict)
    num_outputs: int = 1
    reads: Optional[List[Tuple[str, ...]]] = None  # per-output arg names
    alias: bool = False  # elided: output is input 0
    aten: str = ""  # the ATen op it came from, `packet.overload`

    def output_type(self, k: int) -> str:
        """The graph `type` of output `k`."""
        return self.base if self.num_outputs == 1 else f"{self.base}__{k}"

    def output_inputs(self, k: int) -> List[Any]:
        """The FX nodes output `k` reads, in schema order."""
        if self.reads is None:
            return [n for _, n in self.tensors]
        wanted = set(self.reads[k])
        return [n for name, n in self.tensors if name in wanted]


class NamingError(Exception):
    """An ATen call the naming rules cannot express."""


def _is_tensor_type(t) -> bool:
    if isinstance(t, torch.OptionalType):
        t = t.getElementType()
    return isinstance(t, torch.TensorType)


def _is_tensor_list_type(t) -> bool:
    if isinstance(t, torch.OptionalType):
        t = t.getElementType()
    return isinstance(t, torch.ListType) and _is_tensor_type(
        t.getElementType())


def _bind(schema, args, kwargs) -> List[Tuple[Any, Any, bool]]:
    """(argument, value, given) for every schema argument, defaults filled."""
    bound = []
    for i, a in enumerate(schema.arguments):
        if i < len(args) and not a.kwarg_only:
            bound.append((a, args[i], True))
        elif a.name in kwargs:
            bound.append((a, kwargs[a.name], True))
        elif a.has_default_value():
            bound.append((a, a.default_value, False))
        else:
            bound.append((a, None, False))
    return bound


def _param_value(v):
    """A JSON-friendly scalar: bools as 0/1, finite floats and ints."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        if math.isnan(v):
            return "nan"
        return v
    if isinstance(v, torch.SymIntNode):
        raise NamingError("symbolic sizes are not supported")
    raise NamingError(f"unsupported parameter value {v!r}")


def _add_param(params, name, value, rank_of_dim):
    if value is None or name in DROPPED_ARGS:
        return
    if isinstance(value, (torch.dtype, torch.device, torch.layout,
                          torch.memory_format)):
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            params[f"{name}_{i}"] = _normalize_dim(name, _param_value(v),
                                                   rank_of_dim)
        return
    params[name] = _normalize_dim(name, _param_value(value), rank_of_dim)


def _normalize_dim(name, v, rank):
    """Negative `dim`/`dims` params count from the end; make them absolute."""
    if name in ("dim", "dims", "dim0", "dim1") and isinstance(v, int) and \
            v < 0 and rank is not None:
        return v + rank
    return v


def _shape(node) -> Optional[List[int]]:
    meta = getattr(node, "meta", {}).get("tensor_meta")
    return None if meta is None else [int(d) for d in meta.shape]


def _rank(node) -> Optional[int]:
    shape = _shape(node)
    return None if shape is None else len(shape)


def _resolve_sizes(packet, size, shape):
    """The output shape of a view or expand: no -1 entries."""
    if shape is None or -1 not in size:
        return [int(d) for d in size]
    if packet == "expand":  # -1 keeps the (right-aligned) input extent
        offset = len(size) - len(shape)
        return [shape[i - offset] if d == -1 else int(d)
                for i, d in enumerate(size)]
    numel = 1
    for d in shape:
        numel *= d
    known = 1
    for d in size:
        known *= d if d != -1 else 1
    return [numel // known if d == -1 else int(d) for d in size]


def _is_same_shape(packet, args, kwargs) -> bool:
    """A view or expand to the input's own shape is the identity."""
    if packet not in VIEW_OPS and packet != "expand":
        return False
    size = args[1] if len(args) > 1 else kwargs.get("size",
                                                     kwargs.get("shape"))
    shape = _shape(args[0])
    if shape is None or size is None or len(size) != len(shape):
        return False
    return all(s == d or (packet == "expand" and s == -1)
               for s, d in zip(size, shape))


def _is_noop_squeeze(packet, args) -> bool:
    """`squeeze(x, dim)` of a dim whose extent is not 1 is the identity
    (Tacotron2's decoder squeezes dim 1 of a [batch, n] tensor)."""
    if packet != "squeeze" or len(args) != 2 or not isinstance(args[1], int):
        return False
    shape = _shape(args[0])
    return shape is not None and -len(shape) <= args[1] < len(shape) and \
        shape[args[1]] != 1


def _is_full_slice(packet, args) -> bool:
    """`x[:, t]` issues `slice(x, 0, 0, INT64_MAX)`: the identity, and so is
    its backward `slice_backward(g, sizes, 0, 0, INT64_MAX, 1)`."""
    if packet == "slice_backward" and len(args) == 6:
        shape, (dim, start, end, step) = list(args[1]), args[2:]
    elif packet == "slice" and len(args) >= 1:
        shape = _shape(args[0])
        dim = args[1] if len(args) > 1 else 0
        start = args[2] if len(args) > 2 else None
        end = args[3] if len(args) > 3 else None
        step = args[4] if len(args) > 4 else 1
    else:
        return False
    if shape is None:
        return False
    if dim < 0:
        dim += len(shape)
    return (start in (None, 0) and step == 1 and
            (end is None or end >= shape[dim]))


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_tensor_value(v) -> bool:
    """FX nodes (and test stand-ins) carry their tensor in `meta`."""
    return hasattr(v, "meta")


def _accepts(schema, args, kwargs) -> bool:
    """Whether `schema` takes these values: numbers where it has non-tensor
    arguments, tensors where it has tensor arguments."""
    positional = [a for a in schema.arguments if not a.kwarg_only]
    names = {a.name for a in schema.arguments}
    if len(args) > len(positional) or not set(kwargs) <= names:
        return False
    for a, v, given in _bind(schema, args, kwargs):
        if not given:
            if not a.has_default_value() and \
                    not isinstance(a.type, torch.OptionalType):
                return False
            continue
        if _is_number(v) and _is_tensor_type(a.type):
            return False
        if _is_tensor_value(v) and not _is_tensor_type(a.type):
            return False
    return True


def _number_overload(packet: str, args, kwargs):
    """The overload of `packet` that takes numbers where the call passed
    numbers (`mul.Tensor(x, 0.5)` -> `mul.Scalar`), if ATen has one."""
    pkt = getattr(torch.ops.aten, packet, None)
    if pkt is None:
        return None
    for name in pkt.overloads():
        if name == "out" or name.endswith("_out"):
            continue
        op = getattr(pkt, name)
        if _accepts(op._schema, args, kwargs):
            return op
    return None


def canonicalize(op, args, kwargs) -> OpCall:
    """Turn one ATen call (FX node target, args, kwargs) into an OpCall."""
    op = _functional(op)
    packet, overload = op.overloadpacket.__name__, op._overloadname
    bound = _bind(op._schema, args, kwargs)
    # A Tensor argument given a Python number selects the overload that
    # takes a number there (usually `Scalar`).
    if any(_is_tensor_type(a.type) and _is_number(v) for a, v, _ in bound):
        number_op = _number_overload(packet, args, kwargs)
        if number_op is None:
            raise NamingError(f"aten.{packet}.{overload} is called with a "
                              "number for a tensor argument and has no "
                              "overload that takes a number there")
        return canonicalize(number_op, args, kwargs)
    call = _random_form(packet, overload, bound)
    if call is None:
        call = _special_form(packet, args, kwargs, bound)
    if call is None:
        call = _generic(op, bound)
    call.aten = f"{packet}.{overload}"
    return call


def _functional(op):
    """In-place and out-of-place variants share a type: `add_` -> `add`,
    `transpose_.default` -> `transpose.int` (the overload with the same
    arguments when the overload names differ)."""
    packet, overload = op.overloadpacket.__name__, op._overloadname
    if not packet.endswith("_") or packet.startswith("_") or \
            (packet, overload) in RANDOM_OPS:
        return op
    functional = getattr(torch.ops.aten, packet[:-1], None)
    if functional is None:
        return op
    if overload in functional.overloads():
        return getattr(functional, overload)
    signature = _signature(op._schema)
    for name in functional.overloads():
        candidate = getattr(functional, name)
        if _signature(candidate._schema) == signature:
            return candidate
    return op


def _signature(schema):
    return [(a.name, str(a.type)) for a in schema.arguments]


def _random_form(packet, overload, bound) -> Optional[OpCall]:
    """A random op of RANDOM_OPS: its type, the tensors it reads and its
    distribution's params."""
    form = RANDOM_OPS.get((packet, overload))
    if form is None:
        return None
    base, reads, wanted = form
    values = {a.name: v for a, v, _ in bound}
    params = {}
    for name, source in wanted.items():
        value = values.get(source) if isinstance(source, str) else source
        _add_param(params, name, value, None)
    return OpCall(base=base, tensors=[(n, values[n]) for n in reads],
                  params=params)


def _special_form(packet, args, kwargs, bound) -> Optional[OpCall]:
    """Aliases, reshapes, constant and random fills (see the module doc)."""
    if packet in ALIAS_OPS or _is_full_slice(packet, args) or \
            _is_same_shape(packet, args, kwargs) or \
            _is_noop_squeeze(packet, args):
        return OpCall(base=packet, tensors=[("self", args[0])], alias=True)
    form = strided.logical_form(packet, args) if not kwargs else None
    if form is not None and form[0] == "alias":
        return OpCall(base=packet, tensors=[("self", form[1])], alias=True)
    if form is not None:
        return OpCall(base="view", tensors=[("self", form[1])],
                      params={f"size_{i}": d for i, d in enumerate(form[2])})
    if packet in VIEW_OPS or packet == "expand":
        size = args[1] if len(args) > 1 else kwargs.get("size", kwargs.get(
            "shape"))
        sizes = _resolve_sizes(packet, list(size), _shape(args[0]))
        return OpCall(base="view" if packet in VIEW_OPS else "expand",
                      tensors=[("self", args[0])],
                      params={f"size_{i}": d for i, d in enumerate(sizes)})
    if packet in FILL_OPS:
        value = FILL_OPS[packet]
        if value is None:
            value = kwargs.get("fill_value", args[-1] if args else 0.0)
        if not _is_number(value) and not isinstance(value, bool):
            raise NamingError(f"aten.{packet} fills with a tensor value")
        return OpCall(base="full", tensors=[],
                      params={"value": _param_value(float(value))})
    return None


def _generic(op, bound) -> OpCall:
    """The general rule: type from packet and overload, tensors as inputs
    (None optionals named in the type), everything else as params."""
    packet, overload = op.overloadpacket.__name__, op._overloadname
    base = packet if overload == "default" else f"{packet}_{overload}"
    rank = next((_rank(v[0] if _is_tensor_list_type(a.type) else v)
                 for a, v, _ in bound
                 if (_is_tensor_type(a.type) and v is not None) or
                 (_is_tensor_list_type(a.type) and v)), None)
    if packet in ("unsqueeze", "stack") and rank is not None:
        rank += 1  # its dim counts in the output (stack(.., dim=-1))
    tensors, params, missing = [], {}, []
    for a, v, _ in bound:
        if _is_tensor_list_type(a.type):
            tensors.extend((f"{a.name}_{i}", n) for i, n in enumerate(v or []))
            base += f"_n{len(v)}" if v is not None else ""
        elif _is_tensor_type(a.type):
            if v is None:
                missing.append(a.name)
            else:
                tensors.append((a.name, v))
        elif isinstance(v, str):
            if not (a.has_default_value() and v == a.default_value):
                base += f"_{v}"
        else:
            _add_param(params, a.name, v, rank)
    base += "".join(f"_no{name}" for name in missing)
    _clamp_slice(packet, params, bound)
    _default_stride(packet, params)
    n_out = len(op._schema.returns)
    return OpCall(base=base, tensors=tensors, params=params,
                  num_outputs=n_out,
                  reads=_reads_for(packet, overload, params, n_out))


# Pooling ops whose empty `stride` list means ATen's default, the kernel
# size (LPPool records avg_pool2d(x, kernel_size, [])).
_POOLS_WITH_STRIDE = {
    f"{kind}{s}d{suffix}" for s in (2, 3) for kind, suffixes in (
        ("avg_pool", ("", "_backward")),
        ("max_pool", ("_with_indices", "_with_indices_backward")))
    for suffix in suffixes}


def _default_stride(packet, params) -> None:
    """A pooling's empty stride becomes the kernel size, as ATen reads it,
    so its spec sees one param set."""
    if packet in _POOLS_WITH_STRIDE and "stride_0" not in params:
        i = 0
        while f"kernel_size_{i}" in params:
            params[f"stride_{i}"] = params[f"kernel_size_{i}"]
            i += 1


def _clamp_slice(packet, params, bound) -> None:
    """`slice`, `slice_scatter` and `slice_backward` bounds as Python slices
    resolve them: a negative start or end counts from the end of the
    dimension, and both are clamped to [0, extent]."""
    if packet in ("slice", "slice_scatter"):
        shape = _shape(bound[0][1])
        if shape is None:
            return
        extent = shape[params["dim"]]
    elif packet == "slice_backward":
        sizes = bound[1][1]
        params["dim"] %= len(sizes)
        extent = sizes[params["dim"]]
    else:
        return
    for key, default in (("start", 0), ("end", extent)):
        v = params.get(key, default)
        params[key] = min(max(v + extent if v < 0 else v, 0), extent)


def reads_entry(packet, overload, params):
    """The READS entry for a call with these params (an entry may be a list
    of alternatives, the first whose `when` holds applies), or None."""
    entries = READS.get((packet, overload))
    if entries is None:
        return None
    for entry in entries if isinstance(entries, list) else [entries]:
        when = entry.get("when")
        if when is None or params.get(when[0]) == int(when[1]):
            return entry
    return None


def _reads_for(packet, overload, params, n_out):
    entry = reads_entry(packet, overload, params)
    if entry is None:
        return None
    assert len(entry["outputs"]) == n_out, (packet, overload)
    return entry["outputs"]
