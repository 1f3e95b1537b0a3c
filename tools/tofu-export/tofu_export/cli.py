"""This file implements the tofu-export command line: parse the options,
build the model on the meta device, capture its training step and write the
tofu-graph JSON. Exit status: 0 success, 1 bad model (it cannot be found,
built, traced or written as a tofu-graph), 2 bad usage.
"""

import argparse
import json
import math
import sys
import time
from typing import List, Optional

from . import library, options
from .errors import ModelError, UsageError, describe

DESCRIPTION = """\
Capture one whole training step (forward, loss, backward and optimizer
update) of a PyTorch model as a tofu-graph JSON document. The model is built
on the meta device and traced with make_fx over meta tensors: no weights are
allocated, so very large models export in seconds.

models:
  torchvision:NAME      a torchvision.models constructor, e.g.
                        torchvision:wide_resnet50_2; input BATCHx3xIMAGExIMAGE,
                        cross-entropy over --classes
  resnet50, vgg16       torchvision's ResNet-50 and VGG-16
  wresnet:L:K           Wide ResNet-L (L = 50, 101 or 152) with widening
                        factor K (torchvision ResNet with Bottleneck blocks
                        and width_per_group = 64*K); wresnet:50:2 is
                        torchvision's wide_resnet50_2
  rnn:L:H               L-layer LSTM language model of width H, --steps
                        unrolled steps, --vocab words, cross-entropy per step
  gpt:L:H:HEADS:SEQ     GPT-style transformer: L pre-layernorm blocks of
                        width H with HEADS attention heads over SEQ tokens,
                        --vocab words
  torch:rnn:L:H, torch:lstm:L:H, torch:gru:L:H
                        PyTorch's nn.RNN/LSTM/GRU (L layers, width H) on an
                        input BATCHx--stepsxH, mse loss
  torch:mha:E:HEADS     nn.MultiheadAttention self-attention of width E
  torch:encoder:L:E:HEADS, torch:decoder:L:E:HEADS
                        nn.TransformerEncoder / nn.TransformerDecoder
  FILE.py:CLASS         CLASS(**--model-kwargs) from a Python file, called on
                        inputs given by --input (at least one)
"""

EPILOG = """\
losses (--loss): auto picks `ce` for image models and `output` for the
built-in language models; for FILE.py models it uses the output itself when
it is a scalar and `mse` against a target of the output's shape otherwise.
  ce      cross-entropy of the output (classes on dim 1) with an i64 target
  mse     mean squared error with a target of the output's shape
  sum     the sum of the output
  output  the output is the loss (a scalar)

examples:
  tofu-export torchvision:wide_resnet50_2 --batch 32 --image 224 -o wrn50.json
  tofu-export wresnet:152:10 --batch 8 --optimizer sgd -o wrn152-10.json
  tofu-export rnn:10:8192 --batch 128 -o rnn-10-8k.json
  tofu-export path/model.py:MLP --input 8x1024 --optimizer adam -o mlp.json

ops without a spec: every op of the step must have a spec in the operator
library (the standard one, unless --no-default-specs, and each --spec file).
An op without one is decomposed with PyTorch's decompositions into ops that
have one where possible (--no-decompose turns this off; an op with a spec is
never decomposed); the rest are errors, all listed in one run with module
and source line (--allow-missing-specs writes the graph anyway).

inputs given as values (--input NAME=SHAPE:DTYPE=[V,...]) are constants the
trace may read, e.g. lengths that size a padding mask:
  tofu-export model.py:Conformer --input 2x10x16 --input 'lengths=2:i64=[10,7]'

exit status: 0 success, 1 bad model (including ops without a spec and reads
of unknown tensor values), 2 bad usage.
"""


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not an integer")
    if value <= 0:
        raise argparse.ArgumentTypeError(f"'{text}' must be positive")
    return value


def make_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tofu-export", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", help="the model to export (see above)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the graph to FILE (default: stdout)")
    p.add_argument("--batch", type=_positive, default=8,
                   help="batch size (default: 8)")
    p.add_argument("--image", type=_positive, default=224,
                   help="image height and width for image models "
                        "(default: 224)")
    p.add_argument("--classes", type=_positive, default=1000,
                   help="classes of image models (default: 1000)")
    p.add_argument("--vocab", type=_positive, default=10000,
                   help="vocabulary of rnn and gpt models (default: 10000)")
    p.add_argument("--steps", type=_positive, default=20,
                   help="unrolled steps of rnn models (default: 20)")
    p.add_argument("--input", action="append", default=[], metavar="SHAPE",
                   help="an input of a FILE.py model, in the order of its "
                        "forward's arguments: [NAME=]DxDx...[:DTYPE][=[V,...]]"
                        " with DTYPE one of f32 (default), f16, bf16, f64, "
                        "i64, i32, i8, bool; NAME names the graph tensor; "
                        "=[V,...] gives its values (row-major), which makes "
                        "it a constant the trace may read, e.g. "
                        "lengths=2:i64=[5,3]; repeat for several inputs")
    p.add_argument("--model-kwargs", metavar="JSON", default="{}",
                   help="keyword arguments of the model constructor, as a "
                        "JSON object (FILE.py and torchvision models)")
    p.add_argument("--loss", default="auto",
                   choices=["auto", "ce", "mse", "sum", "output"],
                   help="the loss (default: auto; see below)")
    p.add_argument("--optimizer", default="sgd",
                   choices=["sgd", "adam", "adamw"],
                   help="the update to capture, as torch.optim's SGD, Adam "
                        "or AdamW (default: sgd)")
    p.add_argument("--lr", type=float, default=None,
                   help="learning rate (default: 0.1 for sgd, 0.001 for "
                        "adam and adamw)")
    p.add_argument("--momentum", type=float, default=None,
                   help="SGD momentum; non-zero adds a momentum buffer per "
                        "parameter (default: 0)")
    p.add_argument("--betas", default=None, metavar="B1,B2",
                   help="Adam's and AdamW's moment decay rates (default: "
                        "0.9,0.999)")
    p.add_argument("--eps", type=float, default=None,
                   help="Adam's and AdamW's denominator term (default: 1e-8)")
    p.add_argument("--weight-decay", type=float, default=None,
                   help="weight decay (default: 0, AdamW's 0.01)")
    p.add_argument("--precision", default="fp32",
                   choices=["fp32", "bf16", "fp16"],
                   help="mixed precision as torch.autocast: matrix products "
                        "and convolutions in bf16 or fp16, reductions, norms "
                        "and losses in fp32, fp32 parameters updated by the "
                        "optimizer (default: fp32; docs/Export.md)")
    p.add_argument("--loss-scale", type=float, default=None, metavar="S",
                   help="--precision fp16's static loss scale: the loss is "
                        "multiplied by S before the backward pass and the "
                        "gradients divided by S (default: 1024)")
    p.add_argument("--allow-unused-params", action="store_true",
                   help="leave trainable parameters that get no gradient "
                        "(and their optimizer state) out of the graph "
                        "instead of failing")
    p.add_argument("--no-functionalize", action="store_true",
                   help="fail on an in-place update of a view instead of "
                        "rewriting the step functionally")
    p.add_argument("--no-fold-transposes", action="store_true",
                   help="keep every aten.t as an op instead of folding "
                        "matrix transposes into the mm/addmm that read "
                        "them (mm_transposed, addmm_transposed)")
    p.add_argument("--no-decompose", action="store_true",
                   help="record ATen ops as PyTorch issues them, without "
                        "decomposing those that have no spec")
    p.add_argument("--decompose", action="append", default=[], metavar="OP",
                   help="also decompose ATen op OP (`_softmax` or "
                        "`_softmax.default`) where it has a spec, to measure "
                        "what the spec saves (repeatable)")
    p.add_argument("--allow-missing-specs", action="store_true",
                   help="write the graph even if some ops have no spec in "
                        "the operator library (they are listed as warnings)")
    p.add_argument("--spec", action="append", default=[], metavar="FILE",
                   help="a TDL file whose operators count as specs, besides "
                        "the standard library (repeatable)")
    p.add_argument("--no-default-specs", action="store_true",
                   help="do not load the standard operator library "
                        "(<prefix>/share/tofu/specs or the source tree's "
                        "specs/): only --spec files count")
    p.add_argument("--seed", type=int, default=0,
                   help="the seed of the random ops (dropout's masks, rand, "
                        "randn, ...), in [0, 2^32): their values are Philox "
                        "draws of (seed, op, step, element) (default: 0; "
                        "docs/Export.md, \"Random ops\")")
    p.add_argument("--stats", action="store_true",
                   help="print op and tensor counts, the ops decomposed and "
                        "the times to stderr")
    return p


def _options(args) -> options.Options:
    """Check the options that argparse cannot (before torch is loaded)."""
    try:
        kwargs = json.loads(args.model_kwargs)
    except json.JSONDecodeError as e:
        raise UsageError(f"--model-kwargs is not valid JSON: {e}")
    if not isinstance(kwargs, dict):
        raise UsageError("--model-kwargs must be a JSON object")
    return options.Options(
        batch=args.batch, image=args.image, classes=args.classes,
        vocab=args.vocab, steps=args.steps, kwargs=kwargs,
        inputs=[options.parse_input(s) for s in args.input])


def _number(flag: str, value: float, low: float, high: float = math.inf,
            high_open: bool = False) -> float:
    inside = value < high if high_open else value <= high
    if not (math.isfinite(value) and low <= value and inside):
        bound = f"in [{low:g}, {high:g}{')' if high_open else ']'}"
        if high == math.inf:
            bound = f"at least {low:g}"
        raise UsageError(f"{flag} must be {bound}, got {value:g}")
    return value


# --precision fp16's default static loss scale (a power of two, so scaling
# is exact; GradScaler starts at 2^16 and backs off, a static scale cannot).
DEFAULT_LOSS_SCALE = 1024.0


def precision_flags(args) -> dict:
    """Precision's arguments from --precision and --loss-scale (a
    UsageError if they do not fit together; torch is not loaded)."""
    kw = {"name": args.precision}
    if args.loss_scale is not None:
        if args.precision != "fp16":
            raise UsageError("--loss-scale applies to --precision fp16, not "
                             f"{args.precision}")
        kw["loss_scale"] = _number("--loss-scale", args.loss_scale, 1.0)
    elif args.precision == "fp16":
        kw["loss_scale"] = DEFAULT_LOSS_SCALE
    return kw


def precision_of(args):
    """The precision the flags ask for (precision.Precision)."""
    from . import precision
    return precision.Precision(**precision_flags(args))


def optimizer_config(args):
    """The optimizer the flags ask for (optim.OptimizerConfig)."""
    from . import optim
    return optim.OptimizerConfig(**optimizer_flags(args))


def optimizer_flags(args) -> dict:
    """OptimizerConfig's arguments from the flags, checked as torch.optim
    checks them (a UsageError otherwise; torch is not loaded); unset flags
    are left out, to take PyTorch's defaults."""
    kw = {"name": args.optimizer}
    adam = args.optimizer in ("adam", "adamw")
    if args.lr is not None:
        kw["lr"] = _number("--lr", args.lr, 0.0)
    if args.weight_decay is not None:
        kw["weight_decay"] = _number("--weight-decay", args.weight_decay, 0.0)
    if args.momentum is not None:
        if adam:
            raise UsageError(f"--momentum applies to sgd, not "
                             f"{args.optimizer} (see --betas)")
        kw["momentum"] = _number("--momentum", args.momentum, 0.0)
    for flag, value in (("--betas", args.betas), ("--eps", args.eps)):
        if value is not None and not adam:
            raise UsageError(f"{flag} applies to adam and adamw, not "
                             f"{args.optimizer}")
    if args.eps is not None:
        kw["eps"] = _number("--eps", args.eps, 0.0)
    if args.betas is not None:
        parts = args.betas.split(",")
        try:
            betas = [float(b) for b in parts]
        except ValueError:
            betas = []
        if len(betas) != 2:
            raise UsageError(f"--betas expects two numbers B1,B2, got "
                             f"'{args.betas}'")
        kw["beta1"] = _number("--betas B1", betas[0], 0.0, 1.0, True)
        kw["beta2"] = _number("--betas B2", betas[1], 0.0, 1.0, True)
    return kw


class MissingSpecs(ModelError):
    """Ops of the step have no spec (one message line per ATen op)."""


def _resolve_loss(setup, requested: str, has_spec):
    """Pick the loss and build the target it needs (meta tensors)."""
    import torch
    kind = setup.loss if requested == "auto" else requested
    if kind == "ce" and setup.target is not None:
        return kind, setup.target
    if kind in ("sum", "output"):
        return kind, None
    from . import lowerings, trace, values
    recorder = trace.Recorder()
    recorder.watch_modules(setup.module)
    known = values.KnownValues(recorder)
    for name, t in setup.inputs:
        if name in setup.constants:
            known.set(t, setup.constants[name])
    try:
        with lowerings.LoweringMode(has_spec), values.ValueMode(known):
            out = setup.module(*(t for _, t in setup.inputs))
    except ModelError:
        raise
    except Exception as e:
        raise ModelError(f"the model's forward failed on the given inputs: "
                         f"{describe(e)}")
    finally:
        recorder.unwatch_modules()
    if not isinstance(out, torch.Tensor):
        raise ModelError("the model's forward must return one tensor")
    if kind == "auto":
        kind = "output" if out.dim() == 0 else "mse"
    if kind == "ce":
        if out.dim() < 2:
            raise ModelError("--loss ce needs an output with classes on "
                             "dim 1")
        shape = [out.shape[0]] + list(out.shape[2:])
        return kind, torch.empty(shape, dtype=torch.int64, device="meta")
    if kind == "mse":
        return kind, torch.empty_like(out)
    return kind, None


def _capture(args, setup, target, loss, cfg, decomposer, has_spec, times):
    """Trace the step (with the decompositions and lowerings chosen so far)
    and convert it: (captured step, graph, op name -> FX node); adds the
    times taken to `times`."""
    from . import empty, fold, graph, lowerings, random_ops, step
    decomposer.start_trace()
    t0 = time.perf_counter()
    counts = {}
    try:
        with lowerings.LoweringMode(
                has_spec if decomposer.enabled else (lambda _: True),
                counts):
            captured = step.capture(
                setup.module, setup.inputs, target, loss, cfg,
                functional=not args.no_functionalize,
                allow_unused=args.allow_unused_params,
                decompositions=decomposer.table,
                constants=setup.constants, precision=precision_of(args))
    except (ModelError, UsageError):
        raise
    except Exception as e:
        raise ModelError(f"tracing the training step failed: {describe(e)}")
    decomposer.counts.update(counts)
    t1 = time.perf_counter()
    try:
        doc, origins = graph.build_graph_with_origins(captured)
        empty.drop_empty_tensors(doc)
        if not args.no_fold_transposes:
            fold.fold_transposes(doc)
        random_ops.seed_random_ops(doc, args.seed)
    except (graph.ExportError, random_ops.RandomOpsError) as e:
        raise ModelError(str(e))
    times["trace_s"] += t1 - t0
    times["convert_s"] += time.perf_counter() - t1
    return captured, doc, origins


def export(args) -> dict:
    """Build, trace and convert; returns the graph and timing stats."""
    opts = _options(args)
    optimizer = optimizer_flags(args)
    precision_flags(args)
    if not 0 <= args.seed < 2**32:
        raise UsageError(f"--seed must be in [0, 2^32), not {args.seed}")
    lib = library.load(args.spec, args.no_default_specs)
    has_spec = lib.has if lib is not None else (lambda _: True)
    t_import = time.perf_counter()
    import torch
    from . import decompose, meta, missing, models, optim, random_ops
    t0 = time.perf_counter()
    meta.register_meta_kernels()
    setup = models.resolve(args.model, opts)
    loss, target = _resolve_loss(setup, args.loss, has_spec)
    cfg = optim.OptimizerConfig(**optimizer)
    t1 = time.perf_counter()
    decomposer = decompose.Decomposer(
        enabled=lib is not None and not args.no_decompose)
    decomposer.force(args.decompose)
    times = {"trace_s": 0.0, "convert_s": 0.0}
    while True:
        captured, doc, origins = _capture(args, setup, target, loss, cfg,
                                          decomposer, has_spec, times)
        without = missing.find(doc, origins, lib) if lib is not None else []
        if not decomposer.update([n for m in without for n in m.nodes]):
            break
    if without:
        lines = missing.report(without, captured.recorder, lib)
        if not args.allow_missing_specs:
            raise MissingSpecs("\n".join(lines))
        for line in lines[:-1]:
            print(f"tofu-export: warning: {line}", file=sys.stderr)
    t3 = time.perf_counter()
    doc["metadata"] = {"tool": "tofu-export", "model": args.model,
                       "batch": args.batch, "loss": loss,
                       "optimizer": args.optimizer,
                       "optimizer_options": cfg.options(),
                       **precision_of(args).metadata(),
                       "torch": torch.__version__}
    if any(t["name"] == random_ops.STEP for t in doc["tensors"]):
        doc["metadata"]["random"] = random_ops.metadata(args.seed)
    stats = {"import_s": t0 - t_import, "build_s": t1 - t0, **times,
             "rounds": decomposer.rounds + 1,
             "decomposed": decomposer.decomposed(),
             "missing": [m.aten for m in without]}
    return doc, stats


def main(argv: Optional[List[str]] = None) -> int:
    parser = make_parser()
    args = parser.parse_args(argv)
    from . import writer
    try:
        t0 = time.perf_counter()
        doc, stats = export(args)
        writer.write(doc, args.output)
        stats["total_s"] = time.perf_counter() - t0
    except UsageError as e:
        parser.print_usage(sys.stderr)
        print(f"tofu-export: error: {e}", file=sys.stderr)
        return 2
    except ModelError as e:
        for line in str(e).splitlines() or [""]:
            print(f"tofu-export: error: {line}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"tofu-export: error: cannot write '{args.output}': "
              f"{e.strerror}", file=sys.stderr)
        return 1
    if args.stats:
        print(writer.summary(doc, stats), file=sys.stderr)
    return 0
