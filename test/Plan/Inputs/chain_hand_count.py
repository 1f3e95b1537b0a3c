"""Writes the MLP's plan (models/mlp.json, K = 2) recomputing the chain of
`relu`: `relu` (read by two backward ops) and `fc1.addmm`, the
pre-activation, which only `relu` reads (a chain member, docs/CostModel.md,
"Recomputation"). Its comm_bytes and resident_bytes_per_worker are counted
here by hand from the graph's shapes and the plan's regions, not by the
cost model:

- the clone of `fc1.addmm` runs the producer's steps, `split:j` (each
  worker computes the output columns its half of `fc1.weight` gives), so
  it reads all of `input`: each worker fetches the rows of `input` it does
  not hold, once more than the plan without recomputation;
- its output region is the copy's region (the original's), so it delivers
  nothing; the clone of `relu` reads that copy where it lies and writes
  its own copy's region: no bytes;
- each worker holds the two copies' regions.

usage: chain_hand_count.py GRAPH.json PLAN.json OUT_PLAN.json
(the peaks are left as in PLAN.json: tofu-plan --verify then reports
those, and only those, if the hand count is the cost model's)
"""
import json
import sys

graph_path, plan_path, out_path = sys.argv[1:4]
g = json.load(open(graph_path))
p = json.load(open(plan_path))
shape = {t["name"]: t["shape"] for t in g["tensors"]}
region = {t["name"]: [w["region"] for w in t["workers"]]
          for t in p["tensors"]}
steps = {op["name"]: op["steps"] for op in p["ops"]}
assert steps["fc1.addmm"] == ["split:j"], steps["fc1.addmm"]
assert steps["relu"] == ["split:i1"], steps["relu"]
assert region["relu"] == region["fc1.addmm"]


def count(box):
    n = 1
    for lo, hi in box:
        n *= hi - lo
    return n


def whole(name):
    n = 1
    for d in shape[name]:
        n *= d
    return n


F32 = 4
extra_comm = sum(F32 * (whole("input") - count(r)) for r in region["input"])
extra_resident = [F32 * (count(a) + count(b))
                  for a, b in zip(region["fc1.addmm"], region["relu"])]
p["recompute"] = ["fc1.addmm", "relu"]
p["comm_bytes"] += extra_comm
p["resident_bytes_per_worker"] = [
    r + e for r, e in zip(p["resident_bytes_per_worker"], extra_resident)]
json.dump(p, open(out_path, "w"))
print(f"hand count: +{extra_comm} bytes moved, +{extra_resident} resident")
