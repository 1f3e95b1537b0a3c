"""Prints how evenly a plan spreads memory over its workers, from its own
numbers (any K, compact plans included): the fullest worker's predicted
peak against the mean peak, and its resident bytes against an even share
of the graph (every tensor's bytes over K). Issue 22 asks for <= 1.10x.

usage: bench/plan-balance.py PLAN.json GRAPH.json
prints: peak_ratio resident_ratio   (e.g. "1.004 1.051")
For the K <= 64 plans that list regions, test/Plan/Inputs/balance-check.py
also recomputes the resident bytes from them."""
import json
import sys

ELEMENT_SIZES = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "i64": 8,
                 "i32": 4, "i8": 1, "u8": 1, "bool": 1}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    plan = json.load(open(sys.argv[1]))
    graph = json.load(open(sys.argv[2]))
    k = plan["workers"]
    total = 0
    for t in graph["tensors"]:
        n = 1
        for d in t["shape"]:
            n *= d
        total += n * ELEMENT_SIZES[t["dtype"]]
    peaks = plan["peak_bytes_per_worker"]
    resident = plan["resident_bytes_per_worker"]
    if len(peaks) != k or len(resident) != k or min(peaks) < 0:
        sys.exit("the plan has no peak or resident bytes for its %d workers" % k)
    print("%.3f %.3f" % (max(peaks) / (sum(peaks) / k), max(resident) / (total / k)))


if __name__ == "__main__":
    main()
