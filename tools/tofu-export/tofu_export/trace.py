"""This file implements the tracer that records a training step as an FX
graph of ATen ops over meta tensors (make_fx's "real" mode, driven directly
so that every recorded node can be tagged), and the tagging itself: the
phase (forward, backward, update), the module/scope path a node was created
under, and for backward nodes the forward node whose autograd node was
running when the backward op was issued.

Grouping works through autograd hooks. During the forward phase, just
before each ATen call, the previous call is paired with the autograd node in
its outputs' `grad_fn` (by then the call has returned through autograd, and
no later in-place op has replaced that grad_fn yet). When the backward phase
starts, `Recorder.enter_backward` registers a pre-hook and a post-hook on
every such node. While the autograd engine runs a node, its pre-hook has set
the "current forward call", so every ATen op issued by the node's backward
formula is tagged with it. Ops issued between nodes (the engine's gradient
sums into a node's input buffer, the loss seed) carry no forward call; the
graph builder groups them with the op that consumes their result.
"""

import contextlib
import sys
from typing import Any, List, Optional

import torch
import torch.utils._pytree as pytree
from torch.fx.experimental import proxy_tensor as pt

from .scopes import ACTIVE

FORWARD, BACKWARD, UPDATE = "forward", "backward", "update"


class Recorder:
    """Tagging state shared by the tracer, the dispatch mode and the hooks."""

    def __init__(self):
        self.phase = FORWARD
        self.modules: List[str] = []  # qualified names of running modules
        self.scopes: List[str] = []  # explicit scopes (e.g. time steps)
        self.group: Optional[str] = None  # explicit group (update phase)
        self.bwd_of: Optional[Any] = None  # forward FX node being differentiated
        self.in_node = False  # inside an autograd node's backward formula
        self._pending: List[Any] = []  # (fx node, tensor) of the last op
        self._node_of_fn = {}  # id(grad_fn) -> (grad_fn, forward fx node)
        self._hooks = []
        self.view_update: Optional[str] = None  # first in-place view update
        self.strict_views = False  # raise on it instead of functionalizing
        self.module_class = {}  # qualified module name -> class name
        self.lowering: List[str] = []  # decompositions running (decompose.py)
        self.module_hooks = []

    # A node's scope is the innermost running module's qualified name followed
    # by the explicit scopes (e.g. `layers.0.t3`).
    @contextlib.contextmanager
    def scope(self, name: str):
        self.scopes.append(name)
        try:
            yield
        finally:
            self.scopes.pop()

    def watch_modules(self, model: torch.nn.Module) -> None:
        """Track which submodule of `model` is running (forward hooks)."""
        for name, mod in model.named_modules():
            self.module_class[name] = type(mod).__name__
            if not name:
                continue
            self.module_hooks.append(
                mod.register_forward_pre_hook(self._enter_module(name)))
            self.module_hooks.append(
                mod.register_forward_hook(self._exit_module()))

    def unwatch_modules(self) -> None:
        for h in self.module_hooks:
            h.remove()
        self.module_hooks = []

    def _enter_module(self, name):
        def hook(module, inputs):
            self.modules.append(name)
        return hook

    def _exit_module(self):
        def hook(module, inputs, output):
            self.modules.pop()
        return hook

    def module_label(self, module: str) -> str:
        """`'path' (Class)` of a module by qualified name ('' the model)."""
        return (f"'{module or '<top>'}' "
                f"({self.module_class.get(module, '?')})")

    def scope_name(self) -> str:
        parts = self.modules[-1:] + self.scopes
        return ".".join(p for p in parts if p)

    @contextlib.contextmanager
    def update_group(self, group: str):
        """Ops issued inside belong to the update phase, in `group`."""
        old = (self.phase, self.group)
        self.phase, self.group = UPDATE, group
        try:
            yield
        finally:
            self.phase, self.group = old

    def tag(self, node) -> None:
        """Attach the current context to a freshly created FX node."""
        node.meta["tofu_phase"] = self.phase
        node.meta["tofu_scope"] = self.scope_name()
        if self.lowering:
            node.meta["tofu_decomposed_from"] = self.lowering[-1]
        if self.phase == FORWARD:
            node.meta["tofu_source"] = user_line()
            node.meta["tofu_module"] = self.modules[-1] if self.modules \
                else ""
        elif self.phase == BACKWARD:
            node.meta["tofu_bwd_of"] = self.bwd_of if self.in_node else None
        elif self.phase == UPDATE:
            node.meta["tofu_group"] = self.group

    def record_forward(self, out, node_of) -> None:
        """Remember a forward op's output tensors; their `grad_fn` is set
        only once the op has returned through autograd."""
        if self.phase != FORWARD:
            return
        for t in pytree.tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                node = node_of(t)
                if node is not None:
                    self._pending.append((node, t))

    def resolve_pending(self) -> None:
        """Pair the previous forward op with the autograd node it created.

        Called before every op: by then the previous op has returned through
        autograd (its outputs carry their grad_fn) and no later in-place op
        has replaced that grad_fn yet (autograd rebases history only after
        the in-place kernel returns)."""
        for node, t in self._pending:
            fn = t.grad_fn
            if fn is not None and id(fn) not in self._node_of_fn:
                self._node_of_fn[id(fn)] = (fn, node)
        self._pending = []

    def enter_backward(self) -> None:
        """Hook every autograd node a forward op created; start backward."""
        self.resolve_pending()
        for fn, node in self._node_of_fn.values():
            self._hooks.append(fn.register_prehook(self._pre_hook(node)))
            self._hooks.append(fn.register_hook(self._post_hook()))
        self.phase = BACKWARD

    def exit_backward(self) -> None:
        for h in self._hooks:
            h.remove()
        self._hooks = []
        self._node_of_fn = {}
        self.phase, self.in_node, self.bwd_of = UPDATE, False, None

    def _pre_hook(self, node):
        def hook(grad_outputs):
            self.in_node, self.bwd_of = True, node
            return None
        return hook

    def _post_hook(self):
        def hook(grad_inputs, grad_outputs):
            self.in_node, self.bwd_of = False, None
            return None
        return hook


class TraceError(Exception):
    """The step does something a tofu-graph cannot express."""


def _mutates_view(func, args) -> bool:
    """In-place updates of views change their base tensor too, which the
    SSA renaming of in-place ops cannot follow: such a step is
    functionalized (functionalize.py) before it is converted."""
    schema = func._schema
    if not schema.arguments or not args:
        return False
    alias = schema.arguments[0].alias_info
    return (alias is not None and alias.is_write and
            isinstance(args[0], torch.Tensor) and args[0]._is_view())


# Frames of these files are not the model's source line: PyTorch, the
# launcher and tofu-export itself, except its zoo of models.
_LIBRARY_DIRS = ("/torch/", "/functorch/", "/contextlib.py", "/tofu-export")


def _is_library(filename: str) -> bool:
    if "/tofu_export/" in filename:
        return "/tofu_export/zoo/" not in filename
    return any(d in filename for d in _LIBRARY_DIRS)


def user_line() -> Optional[str]:
    """`file:line` of the innermost frame of model code on the stack."""
    frame = sys._getframe(1)
    while frame is not None:
        if not _is_library(frame.f_code.co_filename):
            return f"{frame.f_code.co_filename}:{frame.f_lineno}"
        frame = frame.f_back
    return None


def describe_view_update(func, recorder) -> str:
    """Where an in-place update of a view happens: the ATen op, the module
    and the model's source line (for a backward op, those of the forward
    call it differentiates)."""
    what = f"aten.{func.overloadpacket.__name__}"
    if recorder.phase == BACKWARD and recorder.bwd_of is not None:
        fwd = recorder.bwd_of
        label = recorder.module_label(fwd.meta.get("tofu_module", ""))
        where = f"in the backward of {fwd.target} in module {label}"
        line = fwd.meta.get("tofu_source")
    else:
        label = recorder.module_label(recorder.modules[-1]
                                      if recorder.modules else "")
        where = f"in module {label}"
        line = user_line()
    return f"{what} updates a view of another tensor in place {where}" + (
        f" at {line}" if line else "")


class TaggingTracer(pt.PythonKeyTracer):
    """make_fx's tracer, tagging every node it creates."""

    def __init__(self, recorder: Recorder):
        super().__init__()
        self.recorder = recorder

    def create_node(self, *args, **kwargs):
        node = super().create_node(*args, **kwargs)
        self.recorder.tag(node)
        return node


class OffsetMode(pt.ProxyTorchDispatchMode):
    """make_fx's dispatch mode, also noting each output's storage offset
    (`tofu_offset`; strided.py reads as_strided calls with it)."""

    def inner_torch_dispatch(self, func, types, args=(), kwargs=None):
        out = super().inner_torch_dispatch(func, types, args, kwargs)
        if self.enable_tracing:
            for t in pytree.tree_flatten(out)[0]:
                node = self._node_of(t) if isinstance(t, torch.Tensor) \
                    else None
                if node is not None:
                    node.meta["tofu_offset"] = t.storage_offset()
        return out

    def _node_of(self, t):
        proxy = pt.get_proxy_slot(t, self.tracer, None)
        return None if proxy is None else proxy.proxy.node


class RecordingMode(OffsetMode):
    """The dispatch mode of the step's trace: also remembers forward ops'
    outputs and the first in-place update of a view
    (`recorder.view_update`)."""

    def __init__(self, tracer: TaggingTracer):
        super().__init__(tracer)

    def inner_torch_dispatch(self, func, types, args=(), kwargs=None):
        recorder = self.tracer.recorder
        if self.enable_tracing:
            recorder.resolve_pending()
            if recorder.view_update is None and _mutates_view(func, args):
                recorder.view_update = describe_view_update(func, recorder)
                if recorder.strict_views:
                    raise TraceError(
                        recorder.view_update + "; tofu-export needs the "
                        "out-of-place form (functionalization is off)")
        out = super().inner_torch_dispatch(func, types, args, kwargs)
        if self.enable_tracing:
            recorder.record_forward(out, self._node_of)
        return out


def trace(fn, args, recorder, tracer: Optional[TaggingTracer] = None,
          recording: bool = True, decompositions=None,
          inner_mode=None) -> torch.fx.GraphModule:
    """Trace `fn(*args)` (args: pytrees of meta tensors) into an FX graph.

    This is make_fx(fn, tracing_mode="real") with our tracer and mode;
    `recording` adds the forward/backward pairing and the view-update
    check (off when an already traced graph is replayed). `decompositions`
    (OpOverload -> function) are applied below autograd (decompose.py);
    `inner_mode`, a TorchDispatchMode, sees every op before the tracer
    (values.py)."""
    phs = pytree.tree_map(lambda _: torch.fx._symbolic_trace.PH, args)
    tracer = tracer or TaggingTracer(recorder)
    mode = RecordingMode(tracer) if recording else OffsetMode(tracer)
    func = pt.fake_signature(fn, len(phs))
    ACTIVE.append(recorder)
    try:
        with pt.decompose(decompositions or {}), mode.sym_mode, mode, \
                pt.disable_autocast_cache(), \
                inner_mode or contextlib.nullcontext():
            return pt.dispatch_trace(pt.wrap_key(func, args, tracer),
                                     tracer=tracer, concrete_args=tuple(phs))
    finally:
        ACTIVE.pop()
