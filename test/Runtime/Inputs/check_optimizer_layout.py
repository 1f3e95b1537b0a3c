"""Checks that a plan stores each optimizer state tensor of a graph like its
parameter, and each tensor that `updates` a parameter or state tensor like
the tensor it updates, so that the next-step term of the cost model
(docs/CostModel.md) is zero for them.

usage: check_optimizer_layout.py PLAN.json GRAPH.json
Prints `state: N tensors stored like their parameters, M updates stored
like what they update` or each difference, and exits 1 on any.
"""

import json
import sys

SUFFIXES = ("adam_m", "adam_v", "momentum")


def main():
    plan = json.load(open(sys.argv[1]))
    graph = json.load(open(sys.argv[2]))
    stored = {t["name"]: [w.get("region") for w in t["workers"]]
              for t in plan["tensors"]}
    names = {t["name"] for t in graph["tensors"]}
    errors, states, updates = [], 0, 0
    for t in graph["tensors"]:
        param, _, suffix = t["name"].rpartition(".")
        if t["role"] == "state" and suffix in SUFFIXES and param in names:
            states += 1
            if stored[t["name"]] != stored[param]:
                errors.append(f"'{t['name']}' is stored as "
                              f"{stored[t['name']]}, '{param}' as "
                              f"{stored[param]}")
        if "updates" in t:
            updates += 1
            if stored[t["name"]] != stored[t["updates"]]:
                errors.append(f"'{t['name']}' (updates '{t['updates']}') is "
                              f"stored as {stored[t['name']]}, not as "
                              f"{stored[t['updates']]}")
    for e in errors:
        print(e)
    if errors or not states:
        print(f"check_optimizer_layout.py: FAIL ({states} state tensors)")
        return 1
    print(f"state: {states} tensors stored like their parameters, {updates} "
          "updates stored like what they update")
    return 0


if __name__ == "__main__":
    sys.exit(main())
