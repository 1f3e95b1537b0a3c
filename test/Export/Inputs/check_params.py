"""Compares the parameters of a tofu-graph with those of a PyTorch module:
the same names, and in total the same number of elements; every parameter
has a gradient (`grad_of`) and an update (`updates`) of its shape.

usage: check_params.py GRAPH.json FILE.py:CLASS [KWARGS_JSON]
       check_params.py GRAPH.json torch:KIND:N:... TOFU_EXPORT_DIR
Prints `params: N tensors, M elements, all with grad and update` or the
problems; exits 1 on any.
"""

import importlib.util
import json
import sys

import torch


def build(spec, kwargs):
    if spec.startswith("torch:"):
        sys.path.insert(0, sys.argv[3] if len(sys.argv) > 3 else ".")
        from tofu_export.zoo import torchnn
        kind, *numbers = spec.split(":")[1:]
        return torchnn.build(kind, [int(n) for n in numbers])[0]
    path, cls = spec.rsplit(":", 1)
    loader = importlib.util.spec_from_file_location("model", path)
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    return getattr(module, cls)(**kwargs)


def main():
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    spec = sys.argv[2]
    kwargs = {} if spec.startswith("torch:") or len(sys.argv) < 4 else \
        json.loads(sys.argv[3])
    model = build(spec, kwargs)
    expected = {n: list(p.shape) for n, p in model.named_parameters()}
    tensors = {t["name"]: t for t in doc["tensors"]}
    params = {n: t["shape"] for n, t in tensors.items()
              if t["role"] == "param"}
    grads = {t["grad_of"]: t["shape"] for t in doc["tensors"]
             if "grad_of" in t}
    updates = {t["updates"]: t["shape"] for t in doc["tensors"]
               if "updates" in t}
    problems = []
    if params != expected:
        problems.append(f"graph params {sorted(params)} != module params "
                        f"{sorted(expected)}")
    for n, shape in expected.items():
        if grads.get(n) != shape:
            problems.append(f"'{n}' has no gradient of its shape")
        if updates.get(n) != shape:
            problems.append(f"'{n}' has no update of its shape")
    count = lambda shapes: sum(torch.Size(s).numel() for s in shapes)
    if count(params.values()) != count(expected.values()):
        problems.append(f"{count(params.values())} parameter elements in the "
                        f"graph, {count(expected.values())} in the module")
    for p in problems:
        print(f"error: {p}")
    if problems:
        return 1
    print(f"params: {len(params)} tensors, {count(params.values())} "
          "elements, all with grad and update")
    return 0


if __name__ == "__main__":
    sys.exit(main())
