"""Runs one mixed-precision training step with tofu-run and with PyTorch
from the same values, and compares the loss and the gradients.

usage: precision_vs_torch.py GRAPH.json PLAN.json MODEL REFERENCE WORKDIR
           [TOFU-RUN ARGS...]

GRAPH.json was exported by `tofu-export MODEL ... --precision bf16|fp16`
(docs/Export.md, "Mixed precision"). MODEL is `FILE.py:CLASS:KWARGS_JSON`
or tofu-export's `gpt:L:H:HEADS:SEQ` (its --vocab is read from the graph).
The script seeds the model, writes every graph input as .npy under WORKDIR
(parameters, zero optimizer state, a random batch and target), runs
`tofu-run PLAN.json --graph GRAPH.json --input ... --save-reference
WORKDIR/ref` (TOFU-RUN ARGS appended, e.g. --check) and reads the loss and
the updates from the reference file. The step's gradients follow from the
updates: SGD (no momentum or weight decay) g = (p - p') / lr, Adam and AdamW
(weight decay 0) g = m' / (1 - beta1) from the first moment.

REFERENCE is the PyTorch step they are compared with, on the CPU:
  autocast  torch.autocast("cpu", dtype=torch.bfloat16) (bf16 only; the
            same casts as tofu-export's for models of linears, ReLU and
            cross-entropy, not for layer norm and softmax, which CPU
            autocast leaves in bf16)
  policy    tofu-export's own casts (tofu_export.precision.AutocastMode)
            run eagerly by PyTorch's CPU kernels (bf16 only: PyTorch 1.13
            has no CPU kernels for most fp16 ops)
  emulated  the same casts, with each 16-bit tensor held as float32 values
            rounded to the 16-bit dtype after every op (fp16 and bf16);
            fp16 also scales the loss as the graph does
  emulated64  the same, each op computed in float64 (float32 tensors too)
            and its result rounded once to its dtype: tofu's arithmetic
  fp32      PyTorch's fp32 step, without casts
REFERENCE may list several, comma-separated (one tofu run; each comparison
starts with `reference: NAME`).
Prints `loss: tofu L1, torch L2, rel diff D` and `grads: N tensors, rel diff
E (most from NAME)`, where E is |g - g'| / |g'| over all gradients together
(2-norms) and NAME the tensor contributing most, and exits 1 if D or E
exceeds its tolerance (LOSS_TOLERANCE and GRAD_TOLERANCE below,
docs/Export.md); `fp32` is there to show that the comparison fails on it.
"""

import contextlib
import importlib.util
import json
import os
import subprocess
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "Utils"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools", "tofu-export"))
import npy  # noqa: E402 (test/Utils/npy.py: .npy files without numpy)
from tofu_export import precision as precisions  # noqa: E402
from reference_file import read_reference  # noqa: E402
from rounding import RoundingMode  # noqa: E402 (emulated 16-bit tensors)

DTYPES = {"f32": torch.float32, "f64": torch.float64, "i64": torch.int64,
          "i32": torch.int32}
# Tolerances (docs/Export.md, "Mixed precision"), per reference and
# precision: the loss's relative difference, and the gradients' (the
# relative 2-norm of the difference over all of them).
# - emulated64 computes each op as tofu's kernels do (double arithmetic,
#   one rounding to the result's dtype): tofu must agree to rounding noise
#   (measured up to 2.5e-8 on gpt-2l, where the 16-bit values are equal).
# - emulated computes in float32 as PyTorch's kernels: where a float and a
#   double result fall on either side of a 16-bit rounding boundary the two
#   steps round one element differently, and the difference grows through
#   the later 16-bit ops (gpt-2l: 6e-5 of the first cast's elements, 16% of
#   the first block's output). Both are correct steps; the bound is one
#   unit of the 16-bit dtype, relative (bf16 2^-8, fp16 2^-11).
# - autocast and policy run PyTorch's CPU bf16 kernels, whose mm rounds
#   every partial sum to bf16 (docs/CodeGen.md, "BLAS routing").
# - fp32 is PyTorch's fp32 step: it must fail (the loss tells bf16 from
#   fp32 on the MLP, fp16 from fp32 on the GPT; the gradients are 100 to
#   1000 times over emulated64's bound).
UNIT = {"bf16": 2.0 ** -8, "fp16": 2.0 ** -11}
LOSS_TOLERANCE = {
    "emulated64": {"bf16": 1e-6, "fp16": 1e-6},
    "emulated": UNIT,
    "autocast": {"bf16": 2e-5},
    "policy": {"bf16": 2e-5},
    "fp32": {"bf16": 2e-5, "fp16": 6e-6},
}
GRAD_TOLERANCE = {
    "emulated64": {"bf16": 1e-5, "fp16": 1e-5},
    "emulated": UNIT,
    "autocast": {"bf16": 3e-2},
    "policy": {"bf16": 3e-2},
    "fp32": {"bf16": 3e-2, "fp16": 3e-4},
}


# The emulations: the arithmetic of each op (float32 as PyTorch's kernels,
# float64 as tofu's), each result rounded once to its dtype.
EMULATIONS = {"emulated": torch.float32, "emulated64": torch.float64}


def build(spec, vocab):
    if spec.startswith("gpt:"):
        from tofu_export.zoo.gpt import GPT
        layers, hidden, heads, seq = map(int, spec.split(":")[1:])
        return GPT(layers, hidden, heads, seq, vocab)
    path, cls, kwargs = spec.split(":", 2)
    loader = importlib.util.spec_from_file_location("model", path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return getattr(module, cls)(**json.loads(kwargs))


def inputs_of(doc, model, vocab):
    """Random values of the graph's non-parameter inputs."""
    feed = {}
    for t in doc["tensors"]:
        if t["role"] != "input":
            continue
        shape, dtype = t["shape"], DTYPES[t["dtype"]]
        if dtype == torch.int64:
            # Class indices: the output's width (the MLP) or the vocabulary.
            high = vocab or doc["metadata"].get("classes")
            feed[t["name"]] = torch.randint(0, high, shape)
        else:
            feed[t["name"]] = torch.randn(shape, dtype=dtype)
    return feed


def torch_step(model, args, target, loss_kind, prec, reference, scale):
    """The loss and the parameters' gradients of PyTorch's step."""
    low = precisions.DTYPES[prec]
    if reference == "autocast":
        if prec != "bf16":
            raise SystemExit("precision_vs_torch.py: CPU autocast is bf16")
        ctx = torch.autocast("cpu", dtype=torch.bfloat16)
    elif reference == "policy":
        ctx = precisions.AutocastMode(low)
    elif reference == "fp32":
        ctx = contextlib.nullcontext()
    elif reference in EMULATIONS:
        ctx = RoundingMode(low, precisions.AutocastMode(low),
                           EMULATIONS[reference])
    else:
        raise SystemExit(f"precision_vs_torch.py: unknown reference "
                         f"'{reference}'")
    model.zero_grad()
    with ctx:
        out = model(*args)
        loss = F.cross_entropy(out, target) if loss_kind == "ce" else out
    # The emulation's dispatch mode must also see the backward pass's ops.
    with RoundingMode(low, compute=EMULATIONS[reference]) \
            if reference in EMULATIONS else contextlib.nullcontext():
        (loss * scale if scale != 1.0 else loss).backward()
    grads = {n: p.grad.double() / scale for n, p in model.named_parameters()}
    return float(loss), grads


def tofu_grads(doc, got, initial):
    """The gradients implied by the graph's updates (see the docstring)."""
    meta = doc["metadata"]
    opts = meta["optimizer_options"]
    if opts.get("weight_decay", 0) or opts.get("momentum", 0):
        raise SystemExit("precision_vs_torch.py: weight decay and momentum "
                         "are not supported")
    updates = {t["updates"]: t["name"] for t in doc["tensors"]
               if "updates" in t}
    grads = {}
    for name, value in initial.items():
        if meta["optimizer"] == "sgd":
            grads[name] = (value.double() - got[updates[name]]) / opts["lr"]
        else:
            m = got[updates[name + ".adam_m"]]
            grads[name] = m / (1 - opts["betas"][0])
    return grads


def main():
    graph_path, plan, spec, reference, work = sys.argv[1:6]
    extra = sys.argv[6:]
    doc = json.load(open(graph_path))
    meta = doc["metadata"]
    prec = meta.get("precision", "fp32")
    if prec not in UNIT:
        raise SystemExit(f"precision_vs_torch.py: the graph's precision is "
                         f"{prec}, not bf16 or fp16")
    tensors = {t["name"]: t for t in doc["tensors"]}
    vocab = None
    if spec.startswith("gpt:"):
        vocab = tensors["embed.weight"]["shape"][0]
    torch.manual_seed(0)
    model = build(spec, vocab).train()
    params = dict(model.named_parameters())
    feed = {n: p.detach().clone() for n, p in params.items()}
    feed.update({n: b.detach().clone() for n, b in model.named_buffers()})
    if vocab is None:
        meta["classes"] = model(torch.zeros(
            tensors["input"]["shape"])).shape[-1]
    inputs = inputs_of(doc, model, vocab)
    feed.update(inputs)
    for t in doc["tensors"]:
        if t["role"] == "state" and t["name"] not in feed:
            feed[t["name"]] = torch.zeros(t["shape"], dtype=DTYPES[t["dtype"]])
    args = ["tofu-run", plan, "--graph", graph_path, "--save-reference",
            os.path.join(work, "ref")] + extra
    for name, value in feed.items():
        path = os.path.join(work, name + ".npy")
        shape = "x".join(map(str, value.shape)) or "scalar"
        dtype = next(k for k, d in DTYPES.items() if d == value.dtype)
        npy.make(path, dtype, shape, value.flatten().tolist())
        args += ["--input", f"{name}={path}"]
    run = subprocess.run(args, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    sys.stdout.write("".join(line + "\n" for line in run.stdout.splitlines()
                             if line.startswith("check:")))
    if run.returncode != 0:
        sys.stdout.write(run.stdout)
        raise SystemExit(f"precision_vs_torch.py: tofu-run exited "
                         f"{run.returncode}")
    got = {n: v.double() for n, v in
           read_reference(os.path.join(work, "ref"), tensors).items()}
    loss_name = next(t["name"] for t in doc["tensors"]
                     if t["role"] == "output" and t["shape"] == [])
    tofu_loss = float(got[loss_name])
    grads = tofu_grads(doc, got, {n: feed[n] for n in params})

    if spec.startswith("gpt:"):
        args, target, kind = (inputs["tokens"], inputs["targets"]), None, "output"
    else:
        args, target, kind = (inputs["input"],), inputs["target"], "ce"
    failed = False
    for ref in reference.split(","):
        if len(reference.split(",")) > 1:
            print(f"reference: {ref}")
        failed |= not compare(model, feed, params, args, target, kind, prec,
                              ref, meta, tofu_loss, grads)
    if failed:
        print("precision_vs_torch.py: FAIL")
        return 1
    return 0


def compare(model, feed, params, args, target, kind, prec, reference, meta,
            tofu_loss, grads):
    """Prints the comparison with one reference; False if over tolerance."""
    with torch.no_grad():
        for name, p in params.items():
            p.copy_(feed[name])
    torch_loss, torch_grads = torch_step(
        model, args, target, kind, prec, reference,
        meta.get("loss_scale", 1.0) if reference in EMULATIONS else 1.0)

    loss_diff = abs(tofu_loss - torch_loss) / max(abs(torch_loss), 1e-30)
    # One relative difference over all gradients (a tensor whose exact
    # gradient is 0, as attention's key bias, has no relative one of its
    # own), and the tensor that contributes the most to it.
    num = {n: float((grads[n] - g).norm()) ** 2 for n, g in torch_grads.items()}
    den = sum(float(g.norm()) ** 2 for g in torch_grads.values())
    diff = (sum(num.values()) / max(den, 1e-300)) ** 0.5
    worst_name = max(num, key=num.get)
    print(f"loss: tofu {tofu_loss:.6g}, torch {torch_loss:.6g}, rel diff "
          f"{loss_diff:.3g}")
    print(f"grads: {len(torch_grads)} tensors, rel diff {diff:.3g} "
          f"(most from {worst_name})")
    return loss_diff <= LOSS_TOLERANCE[reference][prec] and \
        diff <= GRAD_TOLERANCE[reference][prec]


if __name__ == "__main__":
    sys.exit(main())
