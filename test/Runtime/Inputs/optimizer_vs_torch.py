"""Trains a model N steps with tofu-run and with torch.optim, from the same
initial values on the same batch, and compares the parameters.

usage: optimizer_vs_torch.py GRAPH.json PLAN.json FILE.py:CLASS KWARGS_JSON
           OPTIMIZER_JSON STEPS WORKDIR [TOFU-RUN ARGS...]

GRAPH.json was exported from FILE.py:CLASS (built with KWARGS_JSON) with
tofu-export's --optimizer/--lr/... flags; OPTIMIZER_JSON names the same
torch.optim class and keyword arguments, e.g. '{"class": "AdamW", "lr":
0.01}'. The script seeds the model, writes every graph input as .npy under
WORKDIR (parameters, zero optimizer state and step count, one random batch
and target), runs `tofu-run PLAN.json --graph GRAPH.json --steps STEPS
--input ... --save-reference WORKDIR/ref` (extra TOFU-RUN ARGS appended),
reads the parameters' updates after the last step from the reference file,
and runs STEPS steps of torch.optim on the same values. Prints
`params: N tensors, max abs diff D, moved M` and exits 1 if D exceeds 1e-6
or the parameters did not move (M: the largest change from the initial
values, which must be well above D for the comparison to mean anything).
"""

import importlib.util
import json
import os
import subprocess
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "Utils"))
import npy  # noqa: E402 (test/Utils/npy.py: .npy files without numpy)
from reference_file import read_reference  # noqa: E402

DTYPES = {"f32": torch.float32, "f64": torch.float64, "i64": torch.int64,
          "i32": torch.int32}
TOLERANCE = 1e-6


def build(spec, kwargs):
    path, cls = spec.rsplit(":", 1)
    loader = importlib.util.spec_from_file_location("model", path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return getattr(module, cls)(**kwargs)


def loss_fn(kind):
    if kind == "ce":
        return F.cross_entropy
    if kind == "mse":
        return F.mse_loss
    raise SystemExit(f"optimizer_vs_torch.py: loss '{kind}' not supported")


def main():
    graph_path, plan, spec, kwargs, opt_json, steps, work = sys.argv[1:8]
    extra, steps = sys.argv[8:], int(steps)
    doc = json.load(open(graph_path))
    tensors = {t["name"]: t for t in doc["tensors"]}
    torch.manual_seed(0)
    model = build(spec, json.loads(kwargs)).train()
    params = dict(model.named_parameters())
    inputs = [t for t in doc["tensors"]
              if t["role"] == "input" and t["name"] != "target"]
    x = [torch.randn(t["shape"], dtype=DTYPES[t["dtype"]]) for t in inputs]
    out_shape = list(model(*x).shape)
    tgt = tensors.get("target")
    if tgt is None:
        raise SystemExit("optimizer_vs_torch.py: the graph has no target")
    if tgt["dtype"] in ("i64", "i32"):
        target = torch.randint(0, out_shape[-1], tgt["shape"],
                               dtype=DTYPES[tgt["dtype"]])
    else:
        target = torch.randn(tgt["shape"], dtype=DTYPES[tgt["dtype"]])

    feed = {n: p.detach().clone() for n, p in params.items()}
    feed.update({t["name"]: v for t, v in zip(inputs, x)})
    feed["target"] = target
    for t in doc["tensors"]:
        if t["role"] == "state" and t["name"] not in feed:
            # Optimizer state starts at zero, as torch.optim's does.
            feed[t["name"]] = torch.zeros(t["shape"], dtype=DTYPES[t["dtype"]])
    args = ["tofu-run", plan, "--graph", graph_path, "--steps", str(steps),
            "--save-reference", os.path.join(work, "ref")] + extra
    for name, value in feed.items():
        if name not in tensors:
            raise SystemExit(f"optimizer_vs_torch.py: '{name}' is not a "
                             "tensor of the graph")
        path = os.path.join(work, name + ".npy")
        shape = "x".join(map(str, value.shape)) or "scalar"
        dtype = next(k for k, d in DTYPES.items() if d == value.dtype)
        npy.make(path, dtype, shape, value.flatten().tolist())
        args += ["--input", f"{name}={path}"]
    run = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    if run.returncode != 0:
        sys.stdout.write(run.stdout)
        raise SystemExit(f"optimizer_vs_torch.py: tofu-run exited "
                         f"{run.returncode}")
    got = read_reference(os.path.join(work, "ref"), tensors)
    updated = {t["updates"]: got[t["name"]] for t in doc["tensors"]
               if t.get("updates") in params}

    options = json.loads(opt_json)
    opt = getattr(torch.optim, options.pop("class"))(model.parameters(),
                                                     **options)
    initial = {n: p.detach().clone() for n, p in params.items()}
    loss = loss_fn(doc["metadata"]["loss"])
    for _ in range(steps):
        opt.zero_grad()
        loss(model(*x), target).backward()
        opt.step()

    if sorted(updated) != sorted(params):
        raise SystemExit(f"optimizer_vs_torch.py: the graph updates "
                         f"{sorted(updated)}, the model has {sorted(params)}")
    diff = max(float((updated[n] - p.detach()).abs().max())
               for n, p in params.items())
    moved = max(float((p.detach() - initial[n]).abs().max())
                for n, p in params.items())
    print(f"params: {len(params)} tensors, max abs diff {diff:.3g}, "
          f"moved {moved:.3g}")
    if diff > TOLERANCE or moved < 1000 * TOLERANCE:
        print("optimizer_vs_torch.py: FAIL")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
