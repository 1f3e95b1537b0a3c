"""Rewrites a graph and its plan for the plan's "recompute" list by the rule
of docs/CostModel.md, "Recomputation", independently of the C++ rewrite
(planner::rewriteForRecompute), and writes the rewritten graph and a plan
of it without "recompute" that keeps the original plan's numbers. If
`tofu-plan --verify` or `tofu-run` accept that pair, the numbers the planner
gave the plan that recomputes are the cost model's numbers of the rewritten
graph.

usage: expand_recompute.py GRAPH.json PLAN.json OUT_GRAPH.json OUT_PLAN.json
           [--all LISTED_PLAN.json]

With --all the plan's list is replaced by every recomputable activation
(an activation a forward op with inputs writes and a backward op reads,
found here by that rule), and PLAN.json with that list (its numbers left
as they were) is also written to LISTED_PLAN.json.
"""
import json
import sys

SUFFIX = "@recompute"

graph_path, plan_path, out_graph, out_plan = sys.argv[1:5]
g = json.load(open(graph_path))
p = json.load(open(plan_path))

tensors = {t["name"]: t for t in g["tensors"]}
producer = {}
for op in g["ops"]:
    for out in op["outputs"]:
        producer.setdefault(out, op)
# The backward pass starts at the first op writing a gradient.
backward = next(i for i, op in enumerate(g["ops"])
                if tensors[op["outputs"][0]]["role"] == "grad")

if len(sys.argv) > 6 and sys.argv[5] == "--all":
    index = {op["name"]: i for i, op in enumerate(g["ops"])}
    read_backward = {x for op in g["ops"][backward:] for x in op["inputs"]}
    p["recompute"] = [
        t["name"] for t in g["tensors"]
        if t["role"] == "activation" and t["name"] in producer
        and index[producer[t["name"]]["name"]] < backward
        and producer[t["name"]]["inputs"] and t["name"] in read_backward]
    json.dump(p, open(sys.argv[6], "w"))
recompute = p.pop("recompute", [])
assert recompute, "the plan recomputes nothing"

done = set()
ops = []
op_steps = {op["name"]: op["steps"] for op in p["ops"]}
plan_ops = []


def emit(op, steps):
    ops.append(op)
    plan_ops.append({"name": op["name"], "steps": steps})


def materialize(name):
    if name in done:
        return
    done.add(name)
    src = producer[name]
    for x in src["inputs"]:
        if x in recompute:
            materialize(x)
    clone = dict(src)
    clone["name"] = src["name"] + SUFFIX
    clone["inputs"] = [x + SUFFIX if x in recompute else x
                       for x in src["inputs"]]
    clone["outputs"] = [name + SUFFIX]
    emit(clone, op_steps[src["name"]])


for i, op in enumerate(g["ops"]):
    op = dict(op)
    if i >= backward:
        for x in op["inputs"]:
            if x in recompute:
                materialize(x)
        op["inputs"] = [x + SUFFIX if x in recompute else x
                        for x in op["inputs"]]
    emit(op, op_steps[op["name"]])

plan_tensors = {t["name"]: t for t in p["tensors"]}
new_tensors = list(g["tensors"])
new_plan_tensors = list(p["tensors"])
for t in g["tensors"]:
    if t["name"] in recompute:
        copy = dict(t, name=t["name"] + SUFFIX)
        new_tensors.append(copy)
        new_plan_tensors.append(dict(plan_tensors[t["name"]],
                                     name=copy["name"]))
g["ops"], g["tensors"] = ops, new_tensors
p["ops"], p["tensors"] = plan_ops, new_plan_tensors
p.pop("graph", None)
json.dump(g, open(out_graph, "w"))
json.dump(p, open(out_plan, "w"))
print(f"rewritten: {len(recompute)} clones, {len(ops)} ops, "
      f"{len(new_tensors)} tensors")
