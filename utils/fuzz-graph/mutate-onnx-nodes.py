#!/usr/bin/python3
"""Structure-aware random fuzzing of tofu-graph's ONNX importer.

usage: mutate-onnx-nodes.py SEED_DIR TOFU_GRAPH SECONDS [RANDOM_SEED]

Where mutate-onnx.py edits bytes (most results no longer parse), this edits
models that still parse: 1-4 random changes to one of the .onnx files in
SEED_DIR (test/Graph/Inputs/make_onnx.py writes a set; torch.onnx exports
make good seeds too): an integer attribute or one element of an ints
attribute or of a Constant's tensor set to a hostile value (-7, -1, 0, 1,
2^40, NaN, ...), a tensor truncated, a node input rewired to another value
or to "", a node's type replaced by one the importer folds or lowers, an
input dropped, an initializer halved. Each result goes through TOFU_GRAPH
(any build; an ASan+UBSan one finds more); any exit status other than 0 or
1 is a failure and the input is kept as crashN.onnx in the working
directory. Prints the count of inputs and exit statuses; exits 1 on a
failure.
"""

import glob
import os
import random
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import onnx
from onnx import numpy_helper

TYPES = ["Shape", "Gather", "Concat", "Slice", "Expand", "Reshape", "Where",
         "Range", "ConstantOfShape", "LSTM", "Pad", "Clip", "Unsqueeze",
         "Squeeze", "Cast", "Equal", "Mul", "Div", "AveragePool",
         "LayerNormalization", "Erf"]


def poke(rng, arr):
    """`arr` with one element made hostile, or truncated."""
    arr = arr.copy()
    if arr.size and arr.dtype.kind in "iu":
        arr.flat[rng.randrange(arr.size)] = rng.choice([-7, -1, 0, 1, 2])
    elif arr.size and arr.dtype.kind == "f":
        arr.flat[rng.randrange(arr.size)] = rng.choice(
            [0.0, -1.0, float("nan"), 1e30])
    if rng.random() < 0.2:
        arr = arr.reshape(-1)[:max(0, arr.size - 1)]
    return arr


def mutate(rng, m):
    g = m.graph
    values = [v for n in g.node for v in n.output] + [""]
    for _ in range(rng.randint(1, 4)):
        if not g.node:
            return
        node = rng.choice(g.node)
        kind = rng.randrange(5)
        if kind == 0 and node.attribute:
            a = rng.choice(node.attribute)
            if a.type == onnx.AttributeProto.INT:
                a.i = rng.choice([-3, -1, 0, 1, 2, 5, 1 << 40])
            elif a.type == onnx.AttributeProto.INTS and len(a.ints):
                a.ints[rng.randrange(len(a.ints))] = rng.choice(
                    [-5, -1, 0, 1, 3, 100, 1 << 40])
            elif a.type == onnx.AttributeProto.TENSOR:
                a.t.CopyFrom(numpy_helper.from_array(
                    poke(rng, numpy_helper.to_array(a.t)), a.t.name))
        elif kind == 1 and len(node.input):
            node.input[rng.randrange(len(node.input))] = rng.choice(values)
        elif kind == 2:
            node.op_type = rng.choice(TYPES)
        elif kind == 3 and len(node.input) > 1:
            del node.input[rng.randrange(len(node.input))]
        elif kind == 4 and g.initializer:
            t = rng.choice(g.initializer)
            arr = numpy_helper.to_array(t)
            arr = arr.reshape(-1)[:arr.size // 2] if rng.random() < 0.5 \
                else poke(rng, arr)
            t.CopyFrom(numpy_helper.from_array(arr, t.name))


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    warnings.simplefilter("ignore")
    seeds = [onnx.load(f)
             for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.onnx")))]
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) == 5 else 1)
    end = time.time() + float(sys.argv[3])
    count, failures, statuses = 0, 0, {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "input.onnx")
        while time.time() < end:
            m = onnx.ModelProto()
            m.CopyFrom(rng.choice(seeds))
            mutate(rng, m)
            with open(path, "wb") as f:
                f.write(m.SerializeToString())
            r = subprocess.run([sys.argv[2], path, "-o", os.devnull],
                               capture_output=True, timeout=120)
            count += 1
            statuses[r.returncode] = statuses.get(r.returncode, 0) + 1
            if r.returncode not in (0, 1):
                failures += 1
                os.replace(path, f"crash{count}.onnx")
                print(f"crash{count}.onnx: exit {r.returncode}: "
                      f"{r.stderr.decode(errors='replace')[:300]}")
    print(f"{count} inputs, {failures} failures, exit statuses {statuses}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
