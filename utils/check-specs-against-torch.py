#!/usr/bin/env python3
"""Checks the TDL operator library against PyTorch's kernels.

Exports small training graphs with tofu-export, replays each with PyTorch's
ATen kernels (tofu_export.replay, the machinery of test/Export's
run_graph.py), and for each distinct instance of an op type (input shapes
and dtypes, params; at most --cap per type) saves the op's actual inputs as
.npy files, evaluates the op's spec with tdl-eval on them and compares the
result with PyTorch's output: rtol 1e-4 and atol 1e-5 for floating-point
outputs (TDL computes in double), exactly for integer and bool outputs.
Real data from a real step keeps data-dependent indices valid (embedding
indices, nll_loss targets, max-pool indices).

    check-specs-against-torch.py [--tdl-eval BIN] [--specs DIR]
        [--spec-file FILE.tdl]... [--model "MODEL OPTIONS"]... [--full]
        [--ops TYPE,...] [--cap N] [--jobs N] [--keep DIR] [--report FILE]

The random ops (specs/random.tdl) cannot match PyTorch's draws: PyTorch's
generator is not the graph's (docs/Export.md, "Random ops"). Their
instances are compared with the replay's values (the graph's own Philox
draws, tofu_export.philox), and against PyTorch on what can be compared:
the shape, the draws of bernoulli at p = 0 and p = 1 (exactly), and the
mean and variance of RANDOM_DRAWS draws of the same op, TDL's against
PyTorch's, within RANDOM_SIGMAS standard errors (`bernoulli: 1 instance
match; draws match torch's`).

Prints one line per op type (`relu: 3 instances match`, an opaque op
`skipped (opaque)`, the failures with their first failing instance), then a summary
`N op types, M instances, all match`. Exits 1 on any mismatch, any op type
without a spec and any tdl-eval failure; 2 on bad usage. Run it with
/usr/bin/python3 (Debian's python3-torch).
"""

import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SRC, "tools", "tofu-export"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from tofu_export import library, random_ops, replay  # noqa: E402

MLP = os.path.join(SRC, "test", "Export", "Inputs", "mlp.py")
# Uses the specs the models above do not (conv bias, uneven adaptive
# pooling, tanh GELU, neg, sub_Scalar, sum, dropout).
LIBRARY_OPS = os.path.join(SRC, "test", "Eval", "Inputs", "library_ops.py")
# A lengths padding mask and a key-padding-masked attention score (arange,
# ge/gt/le/lt.Tensor, baddbmm): torchaudio's Conformer.
MASK_OPS = os.path.join(SRC, "test", "Eval", "Inputs", "mask_ops.py")
# nn.MaxUnpool1d/2d/3d: max_unpool2d/3d and the gather of their backward.
UNPOOL_OPS = os.path.join(SRC, "test", "Eval", "Inputs", "unpool_ops.py")
# F.grid_sample (bilinear, zero padding) and linspace: RAFT's lookups;
# RAFT's rank-7 convex upsampling (view, expand, sum over dims {3, 4}).
SAMPLE_OPS = os.path.join(SRC, "test", "Eval", "Inputs", "sample_ops.py")
# MViT v2's in-place slice updates and relative-position table: slice_scatter
# along dims 2 and 3, as_strided(_scatter), index_put with a rank-2 index;
# its decomposed relative positions (permute, view, unsqueeze, squeeze_dim
# and sums of rank 7 and 8).
RELPOS_OPS = os.path.join(SRC, "test", "Eval", "Inputs", "relpos_ops.py")
# Rank-5 and -6 view ops and cat / stack / unbind along dims 2 and 3.
SHAPE_OPS = os.path.join(SRC, "test", "Eval", "Inputs", "shape_ops.py")
# 1-d, 3-d and unbatched poolings, upsampling, pixel shuffle, unfold / fold
# and reflection / replication padding.
POOL_OPS = os.path.join(SRC, "test", "Eval", "Inputs", "pool_ops.py")
# Every activation layer of torch.nn that trains, pow and the unary math ops.
ACTIVATION_OPS = os.path.join(SRC, "test", "Eval", "Inputs",
                              "activation_ops.py")
# Batch norm of rank 2, 3, 5, layer norm over 2 and 3 dims, group and
# instance norm, reductions over dim sets (specs/norm.tdl, reduce.tdl).
NORM_OPS = os.path.join(SRC, "test", "Eval", "Inputs", "norm_ops.py")
# Convolutions of rank 1, 2 and 3: strided, dilated, grouped, depthwise,
# transposed (specs/conv.tdl).
CONV_OPS = os.path.join(SRC, "test", "Eval", "Inputs", "conv_ops.py")
# torch.nn's losses, nn.Bilinear, nn.EmbeddingBag, distances, dropouts and
# padding (specs/loss.tdl, loss_pointwise.tdl, embedding.tdl, _trilinear).
LOSS_OPS = os.path.join(SRC, "test", "Eval", "Inputs", "loss_ops.py")
# torch.stft / istft as HDemucs and other callers use them, lowered by
# tofu-export into real ops: hann_window (both overloads), cos and sin.
STFT_OPS = os.path.join(SRC, "test", "Eval", "Inputs", "stft_ops.py")
# Dropout and every random fill and factory (specs/random.tdl).
RANDOM_OPS = os.path.join(SRC, "test", "Eval", "Inputs", "random_ops.py")
MODELS = [
    f"{MLP}:MLP --input 4x1024 --classes 10",
    f"{MLP}:Scalar --input 8x16 --input 8x4 --optimizer adam "
    "--allow-unused-params",
    "rnn:2:8 --batch 3 --steps 3 --vocab 10 --momentum 0.9",
    "gpt:1:16:2:4 --batch 2 --vocab 10 --optimizer adam",
    "torchvision:resnet18 --batch 2 --image 32 --classes 10",
    f"{LIBRARY_OPS}:LibraryOps --input 2x3x5x7 --loss output",
    f"{LIBRARY_OPS}:ModelOps --input 2x4x8x8 --loss output",
    f"{LIBRARY_OPS}:ZooOps --input 2x4x8x8 --loss output",
    f"{LIBRARY_OPS}:SwinOps --input 2x4x8x8 --loss output",
    f"{SHAPE_OPS}:ShapeOps --input 2x3x4x2x5 --loss output",
    f"{UNPOOL_OPS}:UnpoolOps --input 2x4x6x6 --loss output",
    f"{SAMPLE_OPS}:SampleOps --input 2x3x5x6 --loss output",
    f"{SAMPLE_OPS}:ConvexUpsample --input 1x36x3x4 --loss output",
    f"{RELPOS_OPS}:RelPosOps --input 2x9x4 --loss output",
    f"{RELPOS_OPS}:DecomposedRelPos --input 2x2x2x3x3x4 --loss output",
    f"{MASK_OPS}:MaskOps --input 2x6x4 --input lengths=2:i64=[6,4] "
    "--loss output",
    f"{POOL_OPS}:PoolOps --input 2x4x6x6 --loss output",
    f"{POOL_OPS}:ResampleOps --input 2x4x4x4 --loss output",
    f"{ACTIVATION_OPS}:ActivationOps --input 2x4x6 --loss output",
    f"{ACTIVATION_OPS}:PowOps --input 2x4x6 --loss output",
    f"{CONV_OPS}:ConvOps --input 2x4x9 --input 2x4x5x5 --input 1x4x4x4x4 "
    "--loss output",
    f"{NORM_OPS}:NormOps --input 2x3x4x5 --loss output",
    f"{NORM_OPS}:ReduceOps --input 2x3x4x5 --loss output",
    f"{LOSS_OPS}:PointwiseLosses --input 4x6 --input 4x5 --loss output",
    f"{LOSS_OPS}:ClassLosses --input 4x6 --input 4:i64 --input 4x5:i64 "
    "--input 2x3x4x4 --input 2x4x4:i64 --classes 5 --loss output",
    f"{LOSS_OPS}:PairLosses --input 4x6 --input 4x5 --loss output",
    f"{LOSS_OPS}:Bilinear --input 2x3x4 --input 2x3x5 --loss output",
    f"{LOSS_OPS}:Bags --input 4x3:i64 --input 4x3 --classes 10 "
    "--loss output",
    f"{LOSS_OPS}:Layers --input 2x4x3x3 --loss output",
    f"{LOSS_OPS}:LoweredLosses --input 4x6 --input 4:i64 --input 4x5 "
    "--classes 5 --loss output",
    f"{STFT_OPS}:StftOps --input 2x1x96 --loss output",
    f"{STFT_OPS}:StftVariants --input 2x1x96 --loss output",
    f"{RANDOM_OPS}:RandomOps --input 2x3x6 --loss output",
]
# Slow to export and replay (tens of seconds each), and no op types beyond
# the default models'.
FULL_MODELS = [
    "torchvision:vgg11 --batch 2 --image 32 --classes 10",
    "wresnet:50:2 --batch 2 --image 32 --classes 10 --optimizer adam",
]
RTOL, ATOL = 1e-4, 1e-5
# The random ops' moments: draws of each, and how many standard errors the
# means and variances of TDL's and PyTorch's draws may differ by.
RANDOM_DRAWS = 1 << 16
RANDOM_SIGMAS = 5.0
TIMEOUT = 120  # seconds per tdl-eval run


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tdl-eval", default=os.path.join(SRC, "build", "bin",
                                                      "tdl-eval"))
    p.add_argument("--specs", default=os.path.join(SRC, "specs"),
                   help="directory of the operator library's .tdl files")
    p.add_argument("--spec-file", action="append", default=[],
                   help="a .tdl file to use instead of --specs (repeatable)")
    p.add_argument("--model", action="append", default=[],
                   help="a tofu-export model and its options, as one "
                        "string (repeatable; default: small MLP, RNN, GPT, "
                        "ResNet-18 and LibraryOps steps)")
    p.add_argument("--full", action="store_true",
                   help="also check VGG-11 and WResNet-50-2 (slow)")
    p.add_argument("--ops", help="check only these op types (comma list)")
    p.add_argument("--cap", type=int, default=3,
                   help="instances per op type (default 3)")
    p.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1))
    p.add_argument("--keep", help="keep the .npy files under this directory")
    p.add_argument("--report", help="write every instance's result here")
    return p.parse_args()


def param_text(value):
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        return repr(value)
    return str(value)


def shape_text(shape):
    return "x".join(str(d) for d in shape) if shape else "scalar"


class Instance:
    """One op of a replayed graph, with its actual inputs and output."""

    def __init__(self, op, values, model):
        self.type = op["type"]
        self.name = op["name"]
        self.model = model
        self.params = {k: v for k, v in op["params"].items()
                       if v is not None}
        self.inputs = [values[t].detach().contiguous().numpy()
                       for t in op["inputs"]]
        self.output = values[op["outputs"][0]].detach().contiguous().numpy()
        self.status = None  # "match", "mismatch", "opaque", "nospec", "error"
        self.detail = ""
        self.max_error = 0.0
        self.seconds = 0.0

    def key(self):
        shapes = tuple((x.shape, str(x.dtype)) for x in self.inputs)
        return (self.type, shapes, tuple(sorted(
            (k, param_text(v)) for k, v in self.params.items())),
            self.output.shape)

    def describe(self):
        ins = ", ".join(f"{shape_text(x.shape)}:{x.dtype}"
                        for x in self.inputs)
        ps = " ".join(f"{k}={param_text(v)}" for k, v in
                      sorted(self.params.items()))
        return (f"{self.name} ({ins}{'; ' + ps if ps else ''}) -> "
                f"{shape_text(self.output.shape)}:{self.output.dtype}")


def collect(models, cap, only):
    """Replays each model and keeps up to `cap` distinct instances per op
    type, in first-seen order."""
    by_type, seen = {}, set()
    for spec in models:
        start = time.time()
        doc, values, _ = replay.replay(spec.split())
        for op in doc["ops"]:
            if only and op["type"] not in only:
                continue
            inst = Instance(op, values, spec.split()[0])
            group = by_type.setdefault(inst.type, [])
            if len(group) >= cap or inst.key() in seen:
                continue
            seen.add(inst.key())
            group.append(inst)
        print(f"# replayed {spec} ({len(doc['ops'])} ops) in "
              f"{time.time() - start:.1f} s", file=sys.stderr)
    return by_type


def compare(inst, got):
    want = inst.output
    if got.shape != want.shape:
        inst.status = "mismatch"
        inst.detail = f"shape {got.shape} instead of {want.shape}"
        return
    g = np.atleast_1d(got.astype(np.float64))
    w = np.atleast_1d(want.astype(np.float64))
    if want.dtype.kind == "f":
        err = np.abs(g - w)
        err[np.isnan(g) & np.isnan(w)] = 0
        err[np.isinf(w) & (g == w)] = 0
        bad = ~(err <= ATOL + RTOL * np.abs(w))
    else:
        err = np.abs(g - w)
        bad = g != w
    inst.max_error = float(np.nanmax(err)) if err.size else 0.0
    if np.isnan(err).any():
        inst.max_error = float("nan")
    if not bad.any():
        inst.status = "match"
        return
    inst.status = "mismatch"
    where = np.unravel_index(np.argmax(bad), bad.shape)
    inst.detail = (f"{int(bad.sum())} of {bad.size} elements differ, max "
                   f"abs error {inst.max_error:.3g}; first at "
                   f"{list(map(int, where))}: tdl {g[where]!r} vs torch "
                   f"{w[where]!r}")


def files_by_op(spec_files):
    """{op name: the spec files that define it, in library order}. TDL
    operators do not call each other, so an op's overloads are all tdl-eval
    needs; parsing the whole library for every instance would cost most of
    the check's time."""
    by_op = {}
    for path in spec_files:
        with open(path, encoding="utf-8") as f:
            for name in library.op_names(f.read()):
                by_op.setdefault(name, []).append(path)
    return by_op


def evaluate(inst, d, tdl_eval, files, inputs, params, shape, tag=""):
    """Runs tdl-eval on `inputs` with `params` for an output of `shape`:
    (its result or None, the finished process)."""
    cmd = [tdl_eval, *files, "--op", inst.type]
    for i, x in enumerate(inputs):
        path = os.path.join(d, f"{tag}in{i}.npy")
        np.save(path, x)
        cmd += ["--input", path]
    for k, v in sorted(params.items()):
        cmd += ["--param", f"{k}={param_text(v)}"]
    out = os.path.join(d, f"{tag}tdl.npy")
    cmd += ["--out-shape", shape_text(shape), "--out-dtype", "f64",
            "-o", out]
    if not tag:
        inst.command = " ".join(cmd)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT)
    return (np.load(out) if r.returncode == 0 else None), r


def torch_draws(op_type, params, inputs):
    """PyTorch's draws of the random op `op_type` over RANDOM_DRAWS
    elements (`inputs`: its tensor inputs after the step, that long)."""
    x = torch.empty(RANDOM_DRAWS, dtype=torch.float64)
    if op_type == "bernoulli":
        return x.bernoulli_(float(params["p"])).numpy()
    if op_type == "bernoulli_probs":
        return torch.bernoulli(torch.from_numpy(inputs[0])).numpy()
    if op_type == "uniform":
        return x.uniform_(float(params["from"]), float(params["to"])).numpy()
    if op_type == "exponential":
        return x.exponential_(float(params["lambd"])).numpy()
    if op_type == "normal":
        return x.normal_(float(params["mean"]), float(params["std"])).numpy()
    if op_type == "normal_Tensor_float":
        return torch.normal(torch.from_numpy(inputs[0]),
                            float(params["std"])).numpy()
    if op_type == "normal_float_Tensor":
        return torch.normal(float(params["mean"]),
                            torch.from_numpy(inputs[0])).numpy()
    if op_type == "normal_Tensor_Tensor":
        return torch.normal(torch.from_numpy(inputs[0]),
                            torch.from_numpy(inputs[1])).numpy()
    return torch.randint(int(params["low"]), int(params["high"]),
                         (RANDOM_DRAWS,)).double().numpy()


def moments_differ(a, b):
    """Why the draws `a` and `b` do not look alike (mean or variance more
    than RANDOM_SIGMAS standard errors apart), or None."""
    for what, fa, fb in (("mean", a, b),
                         ("variance", (a - a.mean()) ** 2,
                          (b - b.mean()) ** 2)):
        se = np.sqrt(fa.var() / fa.size + fb.var() / fb.size)
        if abs(fa.mean() - fb.mean()) > RANDOM_SIGMAS * se + 1e-12:
            return (f"{what} {fa.mean():.6g} vs torch {fb.mean():.6g} "
                    f"(standard error {se:.3g})")
    return None


def check_draws(inst, d, tdl_eval, files):
    """The random op `inst` against PyTorch: the draws of bernoulli at
    p = 0 and 1, then the moments of RANDOM_DRAWS draws. Sets the status
    to "mismatch" with the reason, or leaves it."""
    params = {k: v for k, v in inst.params.items()
              if not k.startswith("size_")}
    params["size_0"] = RANDOM_DRAWS
    inputs = [np.array(inst.inputs[0])] + [
        np.resize(x.astype(np.float64), RANDOM_DRAWS)
        for x in inst.inputs[1:]]
    cases = [("", params)]
    if inst.type == "bernoulli":
        cases += [(f"p{p}-", {**params, "p": p}) for p in (0.0, 1.0)]
    for tag, ps in cases:
        got, r = evaluate(inst, d, tdl_eval, files, inputs, ps,
                          (RANDOM_DRAWS,), tag=tag or "draws-")
        if got is None:
            inst.status, inst.detail = "error", r.stderr.strip()[:200]
            return
        want = torch_draws(inst.type, ps, inputs[1:])
        if tag:
            why = None if np.array_equal(got, want) else \
                f"{int((got != want).sum())} draws differ from torch's"
        else:
            why = moments_differ(got, want)
        if why:
            inst.status = "mismatch"
            inst.detail = f"{tag[:-1] or 'draws'}: {why}"
            return


def check(inst, index, tdl_eval, spec_files, workdir):
    d = os.path.join(workdir, f"{index:04d}-{inst.type}")
    os.makedirs(d, exist_ok=True)
    # An op no file defines gets the whole library: tdl-eval says so.
    files = spec_files.get(inst.type) or spec_files[None]
    np.save(os.path.join(d, "torch.npy"), inst.output)
    start = time.time()
    try:
        got, r = evaluate(inst, d, tdl_eval, files, inst.inputs,
                          inst.params, inst.output.shape)
        if got is not None:
            compare(inst, got)
            if inst.status == "match" and \
                    inst.type in random_ops.RANDOM_TYPES:
                check_draws(inst, d, tdl_eval, files)
    except subprocess.TimeoutExpired:
        inst.status, inst.detail = "error", f"timed out after {TIMEOUT} s"
        return
    finally:
        inst.seconds = time.time() - start
    if r.returncode != 0:
        msg = r.stderr.strip().splitlines()
        first = msg[0] if msg else f"exit status {r.returncode}"
        if "is opaque" in r.stderr:
            inst.status = "opaque"
        elif f"no operator named '{inst.type}'" in r.stderr:
            inst.status = "nospec"
        else:
            inst.status = "error"
        inst.detail = first


def summarize(by_type):
    """Prints one line per op type; returns (types, instances, failed)."""
    failed = 0
    for t in sorted(by_type):
        insts = by_type[t]
        statuses = [i.status for i in insts]
        n = len(insts)
        if all(s == "opaque" for s in statuses):
            print(f"{t}: skipped (opaque)")
        elif all(s == "nospec" for s in statuses):
            print(f"{t}: no spec")
            failed += 1
        elif all(s == "match" for s in statuses):
            draws = "; draws match torch's" \
                if t in random_ops.RANDOM_TYPES else ""
            print(f"{t}: {n} instance{'s' if n > 1 else ''} match{draws}")
        else:
            bad = [i for i in insts if i.status != "match"]
            first = bad[0]
            print(f"{t}: {len(bad)} of {n} instances fail: {first.status} "
                  f"{first.describe()}: {first.detail}")
            failed += 1
    return failed


def write_report(path, by_type):
    with open(path, "w") as f:
        for t in sorted(by_type):
            for i in by_type[t]:
                f.write(f"{i.status}\t{i.model}\t{i.describe()}\t"
                        f"max_error={i.max_error:.3g}\t{i.seconds:.2f} s\t"
                        f"{i.detail}\n"
                        f"\t{getattr(i, 'command', '')}\n")


def main():
    args = parse_args()
    spec_files = args.spec_file or sorted(
        os.path.join(args.specs, f) for f in os.listdir(args.specs)
        if f.endswith(".tdl")) if (args.spec_file or os.path.isdir(
            args.specs)) else []
    if not spec_files:
        print(f"error: no .tdl files (--specs {args.specs})", file=sys.stderr)
        return 2
    tdl_eval = shutil.which(args.tdl_eval)
    if not tdl_eval:
        print(f"error: cannot run '{args.tdl_eval}'", file=sys.stderr)
        return 2
    models = (args.model or MODELS) + (FULL_MODELS if args.full else [])
    only = set(args.ops.split(",")) if args.ops else None
    start = time.time()
    torch.manual_seed(0)
    by_type = collect(models, args.cap, only)
    insts = [i for group in by_type.values() for i in group]
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.keep or tmp
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            files = files_by_op(spec_files)
            files[None] = spec_files
            list(pool.map(lambda p: check(p[1], p[0], tdl_eval, files,
                                          workdir),
                          enumerate(insts)))
    if args.report:
        write_report(args.report, by_type)
    failed = summarize(by_type)
    checked = sum(1 for i in insts if i.status != "opaque")
    print(f"{len(by_type)} op types, {checked} instances, " +
          ("all match" if not failed else f"{failed} op types fail"))
    print(f"# {time.time() - start:.1f} s", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
