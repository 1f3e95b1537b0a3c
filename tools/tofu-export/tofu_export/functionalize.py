"""This file implements the functionalization of a traced training step: a
step whose FX graph updates views in place (an `inplace=True` layer on a
reshaped tensor, `mask[a:b] = v`, an autograd formula that fills a strided
gradient) is replayed, node by node, under PyTorch's own functionalization
(`torch._enable_functionalization`, what `functorch.functionalize` does in
PyTorch 1.13) and traced again. The new graph has no mutation: an update of
a view becomes the out-of-place op followed by a `*_scatter` of the result
into the base (`slice_scatter`, `select_scatter`, `as_strided_scatter`, ...)
and later reads of the base or its views read the new value.

Each node of the new graph inherits the tags of the node it was issued
for (phase, scope, group), and backward tags are remapped to the new forward
nodes, so grouping and naming work as for a graph without mutation. A value
known from inputs given as values (`tofu_value`, values.py) moves to the
new node that holds the old node's result only.
"""

import torch
import torch.utils._pytree as pytree
from torch.fx.experimental import proxy_tensor as pt

from . import trace

_TAGS = ("tofu_phase", "tofu_scope", "tofu_group", "tofu_source",
         "tofu_module", "tofu_decomposed_from")


class _Retagger:
    """Stands in for a Recorder while the old graph is replayed: every new
    node gets the tags of the old node being run."""

    def __init__(self):
        self.current = None  # the old FX node being replayed
        self.new_of = {}  # old FX node -> new FX node of its result

    def tag(self, node) -> None:
        old = self.current
        if old is None:
            node.meta["tofu_phase"] = trace.UPDATE
            node.meta["tofu_group"] = "functionalize"
            return
        for key in _TAGS:
            if key in old.meta:
                node.meta[key] = old.meta[key]
        if old.meta.get("tofu_phase") == trace.BACKWARD:
            node.meta["tofu_bwd_of"] = self.new_of.get(
                old.meta.get("tofu_bwd_of"))


def _mutates(node) -> bool:
    """Whether an FX node is an ATen call that writes its first argument."""
    schema = getattr(node.target, "_schema", None)
    if node.op != "call_function" or schema is None or not schema.arguments:
        return False
    alias = schema.arguments[0].alias_info
    return alias is not None and alias.is_write


class _Replay(torch.fx.Interpreter):
    """Runs the old graph on functional tensors, remembering which new node
    holds each old node's result."""

    def __init__(self, gm, retagger, tracer):
        super().__init__(gm)
        self.retagger = retagger
        self.tracer = tracer

    def run_node(self, n):
        self.retagger.current = n
        result = super().run_node(n)
        if _mutates(n):
            self._sync_all()
        self.retagger.current = None
        if isinstance(result, torch.Tensor) and \
                torch._is_functional_tensor(result):
            inner = torch._from_functional_tensor(result)
            slot = pt.get_proxy_slot(inner, self.tracer, None)
            if slot is not None:
                self.retagger.new_of[n] = slot.proxy.node
                if "tofu_value" in n.meta:  # a value folded into a constant
                    slot.proxy.node.meta["tofu_value"] = n.meta["tofu_value"]
        return result

    def _sync_all(self):
        """Apply a mutation to the base and the other views now, so that the
        scatter ops it needs are issued (and tagged) for the mutating node,
        not for the next reader."""
        for value in self.env.values():
            if isinstance(value, torch.Tensor) and \
                    torch._is_functional_tensor(value):
                torch._sync(value)

    def call_function(self, target, args, kwargs):
        if target is torch.ops.aten.copy_.default and len(args) == 2:
            args = (args[0], _in_layout_of(args[1], args[0]))
        return super().call_function(target, args, kwargs)

    def get_attr(self, target, args, kwargs):
        value = super().get_attr(target, args, kwargs)
        if isinstance(value, torch.Tensor):
            return torch._to_functional_tensor(value)
        return value


def _in_layout_of(src, dst):
    """`src` laid out as `dst` where that is contiguous or channels-last.
    PyTorch 1.13 functionalizes `dst.copy_(src)` as `src` itself, without
    `dst`'s strides (its note "functionalizating copy_() and not preserving
    strides"); autograd's CopySlices copies a gradient into a fresh buffer
    with its base's strides and reads it with `as_strided` in those
    strides, so a transposed gradient would be read wrongly (MViT v2's
    `attn[:, :, 1:, 1:] += rel_pos`). The copy is logically the identity
    (a `clone`, elided in the graph)."""
    if not isinstance(src, torch.Tensor) or not isinstance(dst, torch.Tensor) \
            or src.shape != dst.shape:
        return src
    for fmt in (torch.contiguous_format, torch.channels_last,
                torch.channels_last_3d):
        try:
            if dst.is_contiguous(memory_format=fmt):
                if src.is_contiguous(memory_format=fmt):
                    return src
                return src.contiguous(memory_format=fmt)
        except RuntimeError:  # channels-last of another rank
            continue
    return src


def functionalize(gm: torch.fx.GraphModule, args) -> torch.fx.GraphModule:
    """The graph of `gm` without in-place updates (args: the meta tensors
    of its placeholders)."""
    retagger = _Retagger()
    tracer = trace.TaggingTracer(retagger)

    def run(*flat):
        wrapped = [torch._to_functional_tensor(a) for a in flat]
        torch._enable_functionalization(reapply_views=True)
        try:
            out = _Replay(gm, retagger, tracer).run(*wrapped)
        finally:
            torch._disable_functionalization()
        leaves, spec = pytree.tree_flatten(out)
        result = []
        for t in leaves:
            if isinstance(t, torch.Tensor) and torch._is_functional_tensor(t):
                torch._sync(t)
                t = torch._from_functional_tensor(t)
            result.append(t)
        return pytree.tree_unflatten(result, spec)

    return trace.trace(run, tuple(args), retagger, tracer=tracer,
                       recording=False)
