"""This file implements the captured training step: a pure function of
(parameters, buffers, optimizer state, inputs) that runs the model through
`torch.nn.utils.stateless.functional_call`, computes the loss, differentiates
it with `torch.autograd.grad` and applies the optimizer update. It is traced
over meta tensors, so nothing the size of the model is ever allocated.
"""

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

import torch
import contextlib

import torch.nn.functional as F
from . import functionalize, optim, precision as precisions, trace, values
from .errors import ModelError
from .stateless import functional_call


@dataclass
class GraphInput:
    """A tensor the step reads: a placeholder of the traced graph."""

    name: str
    role: str  # input, param, state
    tensor: torch.Tensor
    kind: str = ""  # param, buffer, optimizer, input, target, constant
    value: Optional[List] = None  # a constant input's values (row-major)


@dataclass
class Captured:
    """The traced step and what its placeholders and outputs mean."""

    graph: torch.fx.GraphModule
    inputs: List[GraphInput]
    # Names of the flattened outputs: loss, grads, new params, new state.
    loss: str = "loss"
    grads: List[str] = field(default_factory=list)  # param names
    new_params: List[str] = field(default_factory=list)
    new_state: List[str] = field(default_factory=list)
    recorder: Optional[trace.Recorder] = None  # modules, for messages


LossFn = Callable[[torch.Tensor, Optional[torch.Tensor]], torch.Tensor]


# Weight of an auxiliary classifier's loss (GoogLeNet's paper: 0.3).
AUX_WEIGHT = 0.3


def _cross_entropy(out, target):
    """Cross-entropy; a model with auxiliary classifiers (GoogLeNet and
    Inception v3 in training mode return a tuple of logits, the main ones
    first) adds AUX_WEIGHT times the cross-entropy of each other one."""
    if isinstance(out, (tuple, list)):
        main, aux = out[0], [o for o in out[1:] if o is not None]
        loss = F.cross_entropy(main, target)
        for logits in aux:
            loss = loss + AUX_WEIGHT * F.cross_entropy(logits, target)
        return loss
    return F.cross_entropy(out, target)


def make_loss(kind: str) -> LossFn:
    """`ce` (cross-entropy over dim 1), `mse`, `sum`, or `output`."""
    if kind == "ce":
        return _cross_entropy
    if kind == "mse":
        return lambda out, target: F.mse_loss(out, target)
    if kind == "sum":
        return lambda out, target: out.sum()
    if kind == "output":
        return lambda out, target: out
    raise ValueError(f"unknown loss '{kind}'")


def capture(model: torch.nn.Module, inputs: List[Tuple[str, torch.Tensor]],
            target: Optional[torch.Tensor], loss_kind: str,
            cfg: optim.OptimizerConfig, functional: bool = True,
            allow_unused: bool = False, decompositions=None,
            constants: Optional[Dict[str, torch.Tensor]] = None,
            precision: Optional[precisions.Precision] = None) -> Captured:
    """Trace one training step of `model` (on the meta device). In-place
    updates of views are functionalized (an error if not `functional`); a
    trainable parameter that gets no gradient is an error unless
    `allow_unused`. `decompositions` are applied while tracing
    (decompose.py); `constants` maps the names of inputs given as values
    to their values (values.py), which the trace may read. `precision`
    applies mixed precision's casts to the forward pass and the loss, and
    fp16's static loss scale (precision.py)."""
    params = {n: p.detach().requires_grad_(True)
              for n, p in model.named_parameters()}
    buffers = {n: b.detach() for n, b in model.named_buffers()}
    state = optim.init_state(cfg, params)
    loss_fn = make_loss(loss_kind)
    if functional:
        _out_of_place(model)
    recorder = trace.Recorder()
    recorder.strict_views = not functional
    recorder.watch_modules(model)

    graph_inputs = (
        [GraphInput(n, "param", t, "param") for n, t in params.items()] +
        [GraphInput(n, "state", t, "buffer") for n, t in buffers.items()] +
        [GraphInput(n, "state", t, "optimizer") for n, t in state.items()] +
        [_graph_input(n, t, constants or {}) for n, t in inputs])
    if target is not None:
        graph_inputs.append(GraphInput("target", "input", target, "target"))
    counts = [len(params), len(buffers), len(state), len(inputs)]
    result = Captured(graph=None, inputs=graph_inputs)

    def step(*flat):
        p_vals, rest = flat[:counts[0]], flat[counts[0]:]
        b_vals, rest = rest[:counts[1]], rest[counts[1]:]
        s_vals, rest = rest[:counts[2]], rest[counts[2]:]
        x_vals, rest = rest[:counts[3]], rest[counts[3]:]
        tgt = rest[0] if rest else None
        p = dict(zip(params, p_vals))
        s = dict(zip(state, s_vals))
        mode = precision.mode() if precision else None
        with mode if mode is not None else contextlib.nullcontext():
            out = functional_call(model, {**p, **dict(zip(buffers, b_vals))},
                                  tuple(x_vals))
            with recorder.scope("loss"):
                loss = loss_fn(out, tgt)
        if loss.dim() != 0:
            raise ValueError("the model's loss must be a scalar; got shape "
                             f"{list(loss.shape)}")
        scale = precision.loss_scale if precision else 1.0
        recorder.enter_backward()
        grads = torch.autograd.grad(loss * scale if scale != 1.0 else loss,
                                    list(p.values()), allow_unused=True)
        if scale != 1.0:
            grads = [g / scale if g is not None else None for g in grads]
        recorder.exit_backward()
        unused = [n for n, g in zip(p, grads) if g is None]
        if unused and not allow_unused:
            raise ModelError(_unused_message(unused))
        return [loss] + _updates(cfg, recorder, p, grads, s, result)

    args = tuple(i.tensor for i in graph_inputs)
    known = values.KnownValues(recorder)
    for gi in graph_inputs:
        if gi.kind == "constant":
            known.set(gi.tensor, constants[gi.name], given=True)
    result.recorder = recorder
    try:
        result.graph = trace.trace(step, args, recorder,
                                   decompositions=decompositions,
                                   inner_mode=values.ValueMode(known))
    finally:
        recorder.unwatch_modules()
    if recorder.view_update is not None:
        try:
            result.graph = functionalize.functionalize(result.graph, args)
        except Exception as e:
            raise trace.TraceError(
                f"{recorder.view_update}, and functionalizing it failed: "
                f"{type(e).__name__}: {str(e).strip().splitlines()[0]}")
    return result


def _graph_input(name, tensor, constants) -> GraphInput:
    """A model input; one given as values is a constant of the step."""
    if name in constants:
        return GraphInput(name, "state", tensor, "constant",
                          constants[name].flatten().tolist())
    return GraphInput(name, "input", tensor, "input")


def _out_of_place(model: torch.nn.Module) -> None:
    """Modules with an `inplace` flag (nn.ReLU, nn.Dropout, nn.Hardswish,
    ...) compute the same step out of place; in place on a view (EfficientNet
    drops out its flattened features) they would need functionalization,
    whose backward goes through layout-dependent `as_strided` ops."""
    for mod in model.modules():
        if isinstance(getattr(mod, "inplace", None), bool):
            mod.inplace = False


def _unused_message(unused: List[str]) -> str:
    shown = ", ".join(f"'{n}'" for n in unused[:8])
    more = f" and {len(unused) - 8} more" if len(unused) > 8 else ""
    return (f"{len(unused)} trainable parameter(s) get no gradient from the "
            f"loss: {shown}{more} (--allow-unused-params leaves them out of "
            "the graph)")


def _updates(cfg, recorder, params, grads, state, result):
    """Apply the optimizer to every parameter that got a gradient."""
    grad_out, param_out, state_out = [], [], []
    with recorder.update_group("update.step"):
        shared, context = optim.begin_step(cfg, state)
    for (name, p), g in zip(params.items(), grads):
        if g is None:
            continue
        with recorder.update_group(f"update.{name}"):
            new_p, new_s = optim.update(cfg, name, p, g, state, context)
        result.grads.append(name)
        grad_out.append(g)
        result.new_params.append(name)
        param_out.append(new_p)
        for key, value in new_s.items():
            result.new_state.append(key)
            state_out.append(value)
    for key, value in shared.items():
        result.new_state.append(key)
        state_out.append(value)
    return grad_out + param_out + state_out
