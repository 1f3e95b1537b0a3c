"""Checks that a plan's memory is balanced across its workers.

usage: balance-check.py PLAN.json GRAPH.json --max-ratio R

Recomputes every worker's resident bytes from the plan's regions (each
worker's region volume times the tensor's element size, as
docs/CostModel.md defines them), checks them against the plan's
resident_bytes_per_worker, and prints the fullest worker's resident bytes
against an even share of the graph and its predicted peak against the mean
peak. Exits 1 when either ratio exceeds R.
"""
import argparse
import json
import sys

ELEMENT_SIZES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8,
                 "i32": 4, "i8": 1, "u8": 1, "bool": 1}


def volume(region):
    v = 1
    for lo, hi in region:
        v *= max(0, hi - lo)
    return v


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("plan")
    parser.add_argument("graph")
    parser.add_argument("--max-ratio", type=float, required=True)
    args = parser.parse_args()
    plan = json.load(open(args.plan))
    graph = json.load(open(args.graph))
    k = plan["workers"]
    shapes = {t["name"]: t for t in graph["tensors"]}
    resident = [0] * k
    total = 0
    for tensor in plan["tensors"]:
        g = shapes[tensor["name"]]
        size = ELEMENT_SIZES[g["dtype"]]
        total += volume([[0, d] for d in g["shape"]]) * size
        if "workers" not in tensor:
            sys.exit("tensor '%s' has no workers list (a compact plan): "
                     "plan with K <= 64" % tensor["name"])
        for w, entry in enumerate(tensor["workers"]):
            if entry.get("region") is not None:
                resident[w] += volume(entry["region"]) * size
    if resident != plan["resident_bytes_per_worker"]:
        sys.exit("resident bytes recomputed from the regions differ from "
                 "the plan's resident_bytes_per_worker")
    fullest = max(range(k), key=lambda w: resident[w])
    share = total / k
    peaks = plan["peak_bytes_per_worker"]
    mean_peak = sum(peaks) / k
    resident_ratio = resident[fullest] / share
    peak_ratio = max(peaks) / mean_peak
    print("resident: worker %d holds %d bytes, %.3fx an even share"
          % (fullest, resident[fullest], resident_ratio))
    print("peak: %d bytes, %.3fx the mean peak" % (max(peaks), peak_ratio))
    ok = resident_ratio <= args.max_ratio and peak_ratio <= args.max_ratio
    print("balanced within %.2fx: %s" % (args.max_ratio, "OK" if ok else "NO"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
