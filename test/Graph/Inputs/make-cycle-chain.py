"""Writes a tofu graph whose ops form a long chain downstream of cycles.

Usage: make-cycle-chain.py OUT.json [CHAIN_LENGTH]

Ops 'a' and 'b' read each other (a 2-op cycle); ops 'c0'..'cN-1' form a
chain that starts at 'b'; ops 'p', 'q', 'r' form a 3-op cycle ('q' also
reads the middle of the chain), and 't' (reading 'p', read by 'q') makes a
second cycle through 'p' in the same strongly connected set; op 's' reads
the end of the chain and itself. The graph verifier must report each
strongly connected set once, and the chain (downstream of the cycles, but
on none) not at all, in linear time.
"""

import json
import sys


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 40000
    tensors = [{"name": "x", "shape": [4], "dtype": "f32", "role": "input"}]
    ops = []

    def op(name, op_type, inputs):
        tensors.append({"name": name, "shape": [4], "dtype": "f32",
                        "role": "activation"})
        ops.append({"name": name, "type": op_type, "inputs": inputs,
                    "outputs": [name]})

    op("a", "add", ["x", "b"])
    op("b", "relu", ["a"])
    prev = "b"
    for i in range(n):
        op("c%d" % i, "relu", [prev])
        prev = "c%d" % i
    op("p", "relu", ["r"])
    op("q", "add", ["p", "c%d" % (n // 2), "t"])
    op("r", "relu", ["q"])
    op("t", "relu", ["p"])
    op("s", "add", [prev, "s"])
    with open(out, "w") as f:
        f.write('{"format": "tofu-graph", "version": 1,\n "tensors": [\n')
        f.write(",\n".join("  " + json.dumps(t) for t in tensors))
        f.write('\n ],\n "ops": [\n')
        f.write(",\n".join("  " + json.dumps(o) for o in ops))
        f.write('\n ]}\n')


if __name__ == "__main__":
    main()
