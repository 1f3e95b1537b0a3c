"""Structural checks of a tofu-graph written by tofu-export.

usage: check_graph.py GRAPH.json [--min-ops N] [--expect-type TYPE]...
                      [--optimizer sgd|adam] [--momentum]

Checks: the format header; unique tensor and op names; every tensor produced
exactly once (by one op, or as a graph input with role input/param/state);
every op input produced by an earlier op or a graph input (so the graph is
acyclic and topologically ordered); known dtypes and roles; shapes are lists
of non-negative ints; every op has one output and a group; backward ops
(those producing role `grad` tensors) are grouped with a forward op; every
param has a `grad` tensor (grad_of) and an `updates` output of its shape;
optimizer state matches the optimizer; consistent shapes for element-wise
ops, matmuls and convolutions. Prints a summary line; exits 1 on the first
list of problems.
"""

import argparse
import json
import sys
from collections import Counter

DTYPES = {"f32", "f16", "bf16", "f64", "i64", "i32", "i8", "bool"}
ROLES = {"input", "param", "grad", "activation", "state", "output"}
SOURCES = {"input", "param", "state"}
UNARY = {"relu", "sigmoid", "tanh", "gelu", "clone", "sqrt"}
BINARY = {"add_Tensor", "sub_Tensor", "mul_Tensor", "div_Tensor",
          "threshold_backward", "sigmoid_backward", "tanh_backward",
          "gelu_backward"}


# Backward op types and the forward op types their group must contain.
BACKWARD_OF = {
    "threshold_backward": "relu", "sigmoid_backward": "sigmoid",
    "tanh_backward": "tanh", "gelu_backward": "gelu",
    "convolution_backward": "convolution",
    "native_batch_norm_backward": "native_batch_norm",
    "native_layer_norm_backward": "native_layer_norm",
    "max_pool2d_with_indices_backward": "max_pool2d_with_indices",
    "_log_softmax_backward_data": "_log_softmax",
    "_softmax_backward_data": "_softmax", "nll_loss_backward": "nll_loss_forward",
    "embedding_dense_backward": "embedding",
    "_adaptive_avg_pool2d_backward": "_adaptive_avg_pool2d",
}


def broadcast(a, b):
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return out[::-1]


def check_shapes(op, shape_of, errors):
    t, ins = op["type"], [shape_of[i] for i in op["inputs"]]
    out = shape_of[op["outputs"][0]]
    where = f"op '{op['name']}' ({t})"
    if t in UNARY and ins[0] != out:
        errors.append(f"{where}: output {out} != input {ins[0]}")
    if t in BINARY and broadcast(ins[0], ins[1]) != out:
        errors.append(f"{where}: {ins[0]} and {ins[1]} do not broadcast "
                      f"to {out}")
    if t == "mm" and (ins[0][1] != ins[1][0] or
                      out != [ins[0][0], ins[1][1]]):
        errors.append(f"{where}: {ins[0]} x {ins[1]} -> {out}")
    if t == "addmm" and out != [ins[1][0], ins[2][1]]:
        errors.append(f"{where}: addmm of {ins[1]}, {ins[2]} -> {out}")
    if t == "bmm" and (ins[0][2] != ins[1][1] or
                       out != [ins[0][0], ins[0][1], ins[1][2]]):
        errors.append(f"{where}: {ins[0]} x {ins[1]} -> {out}")
    if t.startswith("convolution") and "backward" not in t:
        if ins[0][1] != ins[1][1] * op["params"].get("groups", 1) or \
                out[:2] != [ins[0][0], ins[1][0]]:
            errors.append(f"{where}: conv of {ins[0]} by {ins[1]} -> {out}")
    if t in ("view", "expand") and [op["params"].get(f"size_{i}") for i in
                                    range(len(out))] != out:
        errors.append(f"{where}: size params {op['params']} != {out}")
    if t == "view":
        n = 1
        for d in ins[0]:
            n *= d
        m = 1
        for d in out:
            m *= d
        if n != m:
            errors.append(f"{where}: view of {ins[0]} as {out}")


def check(doc, args):
    errors = []
    if doc.get("format") != "tofu-graph" or doc.get("version") != 1:
        errors.append("missing format/version header")
    tensors = {}
    for t in doc["tensors"]:
        if t["name"] in tensors:
            errors.append(f"duplicate tensor '{t['name']}'")
        tensors[t["name"]] = t
        if t["dtype"] not in DTYPES:
            errors.append(f"tensor '{t['name']}': bad dtype {t['dtype']}")
        if t["role"] not in ROLES:
            errors.append(f"tensor '{t['name']}': bad role {t['role']}")
        if not all(isinstance(d, int) and d >= 0 for d in t["shape"]):
            errors.append(f"tensor '{t['name']}': bad shape {t['shape']}")
    available = {n for n, t in tensors.items() if t["role"] in SOURCES}
    produced = Counter()
    op_names = set()
    shape_of = {n: t["shape"] for n, t in tensors.items()}
    group_has_forward = set()
    for op in doc["ops"]:
        if op["name"] in op_names:
            errors.append(f"duplicate op '{op['name']}'")
        op_names.add(op["name"])
        if len(op["outputs"]) != 1:
            errors.append(f"op '{op['name']}' has {len(op['outputs'])} outputs")
            continue
        for i in op["inputs"]:
            if i not in available:
                errors.append(f"op '{op['name']}' reads '{i}' before it is "
                              "produced")
        out = op["outputs"][0]
        if out not in tensors:
            errors.append(f"op '{op['name']}' writes unknown tensor '{out}'")
            continue
        if tensors[out]["role"] in SOURCES:
            errors.append(f"op '{op['name']}' writes graph input '{out}'")
        produced[out] += 1
        available.add(out)
        if not op.get("group"):
            errors.append(f"op '{op['name']}' has no group")
        elif tensors[out]["role"] in ("activation", "output") and \
                "updates" not in tensors[out] and \
                not op["group"].startswith("update."):
            group_has_forward.add(op["group"])
        if not isinstance(op.get("params", {}), dict) or not all(
                isinstance(v, (int, float, str))
                for v in op.get("params", {}).values()):
            errors.append(f"op '{op['name']}': params are not scalars")
        if not errors:
            check_shapes(op, shape_of, errors)
    for n, t in tensors.items():
        if t["role"] not in SOURCES and produced[n] != 1:
            errors.append(f"tensor '{n}' is produced {produced[n]} times")
    by_role = Counter(t["role"] for t in tensors.values())
    for op in doc["ops"]:
        out = tensors.get(op["outputs"][0])
        if out and out["role"] == "grad" and op.get("group") and \
                op["group"] not in group_has_forward and \
                not op["group"].startswith("update."):
            errors.append(f"backward op '{op['name']}' is grouped with "
                          f"'{op['group']}', which is no forward op")
    check_backward_groups(doc, errors)
    check_params(tensors, args, errors)
    if len(doc["ops"]) < args.min_ops:
        errors.append(f"only {len(doc['ops'])} ops (expected >= {args.min_ops})")
    types = Counter(op["type"] for op in doc["ops"])
    for t in args.expect_type:
        if t not in types:
            errors.append(f"no op of type '{t}'")
    return errors, types, by_role


def check_backward_groups(doc, errors):
    """A backward op's group holds the forward op it differentiates."""
    forward_types = {}
    for op in doc["ops"]:
        if ".bwd." not in op["name"]:
            forward_types.setdefault(op.get("group"), set()).add(op["type"])
    for op in doc["ops"]:
        for bwd, fwd in BACKWARD_OF.items():
            if not op["type"].startswith(bwd):
                continue
            types = forward_types.get(op.get("group"), set())
            if not any(t.startswith(fwd) for t in types):
                errors.append(f"backward op '{op['name']}' ({op['type']}) is "
                              f"grouped with {sorted(types)}, not {fwd}")


def check_params(tensors, args, errors):
    grads = {t.get("grad_of") for t in tensors.values() if t["role"] == "grad"}
    updates = {t.get("updates"): t for t in tensors.values()
               if t["role"] == "output" and "updates" in t}
    suffixes = {"sgd": [], "adam": ["adam_m", "adam_v"]}[args.optimizer]
    if args.momentum:
        suffixes = ["momentum"]
    for n, t in tensors.items():
        if t["role"] != "param":
            continue
        if n not in grads:
            errors.append(f"param '{n}' has no gradient")
        if n not in updates or updates[n]["shape"] != t["shape"]:
            errors.append(f"param '{n}' has no update of its shape")
        for s in suffixes:
            state = tensors.get(f"{n}.{s}")
            if state is None or state["role"] != "state":
                errors.append(f"param '{n}' lacks optimizer state '{s}'")
            elif f"{n}.{s}" not in updates:
                errors.append(f"state '{n}.{s}' is never updated")
    losses = [t for t in tensors.values()
              if t["role"] == "output" and "updates" not in t]
    if len(losses) != 1 or losses[0]["shape"] != []:
        errors.append("expected exactly one scalar output (the loss)")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("graph")
    p.add_argument("--min-ops", type=int, default=1)
    p.add_argument("--expect-type", action="append", default=[])
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"])
    p.add_argument("--momentum", action="store_true")
    args = p.parse_args()
    with open(args.graph) as f:
        doc = json.load(f)
    errors, types, roles = check(doc, args)
    for e in errors[:20]:
        print(f"error: {e}")
    if errors:
        print(f"{len(errors)} problems")
        return 1
    print(f"ok: {len(doc['ops'])} ops, {len(types)} types, "
          f"{len(doc['tensors'])} tensors, " +
          ", ".join(f"{r} {n}" for r, n in sorted(roles.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
