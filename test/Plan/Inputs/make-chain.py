"""Writes a tofu-graph of N relu ops in a chain (x -> r0 -> r1 -> ...),
a graph with more ops than the planner decides one by one.

usage: make-chain.py N OUT.json
"""

import json
import sys


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    tensors = [{"name": "x", "shape": [8, 16], "dtype": "f32",
                "role": "input"}]
    ops = []
    for i in range(n):
        name = f"r{i}"
        tensors.append({"name": name, "shape": [8, 16], "dtype": "f32",
                        "role": "output" if i == n - 1 else "activation"})
        ops.append({"name": name, "type": "relu",
                    "inputs": [tensors[-2]["name"]], "outputs": [name]})
    with open(out, "w") as f:
        json.dump({"format": "tofu-graph", "version": 1, "tensors": tensors,
                   "ops": ops}, f)


if __name__ == "__main__":
    main()
