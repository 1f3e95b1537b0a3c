"""This file implements the model names tofu-export accepts and turns each
into a meta-device nn.Module plus the meta tensors of its inputs, its target
and the loss to apply:

  torchvision:NAME        any torchvision.models constructor (images)
  resnet50, vgg16         shorthands for torchvision:resnet50 / :vgg16
  wresnet:L:K             Wide ResNet-L (L = 50, 101, 152), widening factor K
  rnn:L:H                 L-layer LSTM language model of width H
  gpt:L:H:HEADS:SEQ       GPT-style transformer
  torch:KIND:...          PyTorch's nn.RNN/LSTM/GRU, nn.MultiheadAttention,
                          nn.TransformerEncoder/Decoder (zoo/torchnn.py)
  PATH.py:CLASS           CLASS() from a Python file; inputs from --input
"""

import importlib.util
import os
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

import torch

from . import meta
from .errors import ModelError, UsageError, describe
from .options import DTYPE_SPELLINGS, Options

WRESNET_LAYERS = {50: [3, 4, 6, 3], 101: [3, 4, 23, 3], 152: [3, 8, 36, 3]}
DTYPE_NAMES = {"f32": torch.float32, "f16": torch.float16,
               "bf16": torch.bfloat16, "f64": torch.float64,
               "i64": torch.int64, "i32": torch.int32, "i8": torch.int8,
               "bool": torch.bool}
assert set(DTYPE_NAMES) == set(DTYPE_SPELLINGS)


@dataclass
class ModelSetup:
    """A model ready to trace: module, named inputs, target, loss kind."""

    module: torch.nn.Module
    inputs: List[Tuple[str, torch.Tensor]]
    target: Optional[torch.Tensor]
    loss: str  # ce, mse, sum, output; "auto" resolved by the caller
    # Inputs given as values (`--input NAME=SHAPE:DTYPE=[...]`), by name.
    constants: Dict[str, torch.Tensor] = field(default_factory=dict)


def _empty(shape, dtype=torch.float32):
    return torch.empty(shape, dtype=dtype, device="meta")


def _ints(spec: str, parts: List[str], count: int) -> List[int]:
    if len(parts) != count:
        raise ModelError(f"model '{spec}' needs {count} ':'-separated numbers")
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise ModelError(f"model '{spec}': '{':'.join(parts)}' are not all "
                         "integers")
    if any(v <= 0 for v in values):
        raise ModelError(f"model '{spec}': numbers must be positive")
    return values


def _image_setup(module, opts: Options) -> ModelSetup:
    x = _empty([opts.batch, 3, opts.image, opts.image])
    target = _empty([opts.batch], torch.int64)
    return ModelSetup(module, [("input", x)], target, "ce")


def _torchvision(spec: str, name: str, opts: Options) -> ModelSetup:
    import torchvision.models as tvm
    ctor = getattr(tvm, name, None)
    if ctor is None or not callable(ctor) or name.startswith("_"):
        raise ModelError(f"unknown torchvision model '{name}'")
    kwargs = {"num_classes": opts.classes, **opts.kwargs}
    try:
        with meta.meta_construction():
            module = ctor(**kwargs)
    except Exception as e:
        raise ModelError(f"cannot construct torchvision model '{name}': "
                         f"{describe(e)}")
    return _image_setup(meta.to_meta(module), opts)


def _wresnet(spec: str, args: List[str], opts: Options) -> ModelSetup:
    depth, k = _ints(spec, args, 2)
    if depth not in WRESNET_LAYERS:
        raise ModelError(f"model '{spec}': depth must be one of "
                         f"{', '.join(map(str, WRESNET_LAYERS))}")
    from torchvision.models.resnet import Bottleneck, ResNet
    with meta.meta_construction():
        module = ResNet(Bottleneck, WRESNET_LAYERS[depth],
                        width_per_group=64 * k, num_classes=opts.classes)
    return _image_setup(meta.to_meta(module), opts)


def _token_setup(module, opts: Options, length: int) -> ModelSetup:
    tokens = _empty([opts.batch, length], torch.int64)
    targets = _empty([opts.batch, length], torch.int64)
    return ModelSetup(module, [("tokens", tokens), ("targets", targets)],
                      None, "output")


def _rnn(spec: str, args: List[str], opts: Options) -> ModelSetup:
    layers, hidden = _ints(spec, args, 2)
    from .zoo.lstm import LSTMLanguageModel
    with meta.meta_construction():
        module = LSTMLanguageModel(layers, hidden, opts.vocab, opts.steps)
    return _token_setup(meta.to_meta(module), opts, opts.steps)


def _gpt(spec: str, args: List[str], opts: Options) -> ModelSetup:
    layers, hidden, heads, seq = _ints(spec, args, 4)
    if hidden % heads:
        raise ModelError(f"model '{spec}': hidden size {hidden} is not a "
                         f"multiple of {heads} heads")
    unknown = sorted(set(opts.kwargs) - {"dropout"})
    if unknown:
        raise ModelError(f"model '{spec}': --model-kwargs takes only "
                         f"'dropout', not {', '.join(map(repr, unknown))}")
    dropout = opts.kwargs.get("dropout", 0.0)
    if not isinstance(dropout, (int, float)) or not 0 <= dropout < 1:
        raise ModelError(f"model '{spec}': dropout must be a number in "
                         f"[0, 1), not {dropout!r}")
    from .zoo.gpt import GPT
    with meta.meta_construction():
        module = GPT(layers, hidden, heads, seq, opts.vocab, float(dropout))
    return _token_setup(meta.to_meta(module), opts, seq)


def _torch_module(spec: str, args: List[str], opts: Options) -> ModelSetup:
    from .zoo import torchnn
    if not args or args[0] not in torchnn.ARITY:
        raise ModelError(f"model '{spec}': expected torch:KIND:... with KIND "
                         f"one of {', '.join(torchnn.ARITY)}")
    numbers = _ints(spec, args[1:], torchnn.ARITY[args[0]])
    if args[0] in ("mha", "encoder", "decoder") and \
            numbers[-2] % numbers[-1]:
        raise ModelError(f"model '{spec}': width {numbers[-2]} is not a "
                         f"multiple of {numbers[-1]} heads")
    with meta.meta_construction():
        module, width = torchnn.build(args[0], numbers)
    x = _empty([opts.batch, opts.steps, width])
    return ModelSetup(meta.to_meta(module), [("input", x)], None, "auto")


def _from_file(spec: str, path: str, cls: str, opts: Options) -> ModelSetup:
    if not os.path.isfile(path):
        raise ModelError(f"no such model file '{path}'")
    if not opts.inputs:
        raise UsageError(f"model '{spec}' needs at least one --input SHAPE")
    mod_name = "tofu_user_model_" + os.path.basename(path)[:-3]
    try:
        loader = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
    except Exception as e:  # the user's file: report whatever it raised
        raise ModelError(f"cannot import '{path}': {describe(e)}")
    ctor = getattr(module, cls, None)
    if ctor is None:
        raise ModelError(f"'{path}' defines no '{cls}'")
    try:
        with meta.meta_construction():
            model = ctor(**opts.kwargs)
    except Exception as e:
        raise ModelError(f"cannot construct {cls}: {describe(e)}")
    if not isinstance(model, torch.nn.Module):
        raise ModelError(f"{cls}() is not a torch.nn.Module")
    inputs, constants = [], {}
    for i, spec in enumerate(opts.inputs):
        name = spec.name or (f"input{i}" if len(opts.inputs) > 1
                             else "input")
        if name in (n for n, _ in inputs) or name == "target":
            raise UsageError(f"two inputs are named '{name}'" if
                             name != "target" else
                             "an input cannot be named 'target'")
        inputs.append((name, _empty(spec.shape, DTYPE_NAMES[spec.dtype])))
        if spec.values is not None:
            constants[name] = torch.tensor(
                spec.values, dtype=DTYPE_NAMES[spec.dtype]).reshape(
                    spec.shape)
    return ModelSetup(meta.to_meta(model), inputs, None, "auto", constants)


def resolve(spec: str, opts: Options) -> ModelSetup:
    """Build the model named by `spec` on the meta device."""
    head, _, rest = spec.partition(":")
    if head.endswith(".py") and rest:
        return _from_file(spec, head, rest, opts)
    if head == "torchvision" and rest:
        return _torchvision(spec, rest, opts)
    if head in ("resnet50", "vgg16") and not rest:
        return _torchvision(spec, head, opts)
    builders = {"wresnet": _wresnet, "rnn": _rnn, "gpt": _gpt,
                "torch": _torch_module}
    if head in builders:
        return builders[head](spec, rest.split(":") if rest else [], opts)
    raise ModelError(f"unknown model '{spec}' (expected torchvision:NAME, "
                     "resnet50, vgg16, wresnet:L:K, rnn:L:H, "
                     "gpt:L:H:HEADS:SEQ, torch:KIND:... or FILE.py:CLASS)")
