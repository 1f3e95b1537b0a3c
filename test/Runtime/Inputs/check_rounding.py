"""Checks the runtime's f16 and bf16 rounding (runtime/include/tofu/Runtime/
Half.h) against PyTorch's conversions, element for element.

usage: check_rounding.py PLAN.json GRAPH.json WORKDIR [TOFU-RUN ARGS...]

GRAPH.json is Inputs/casts-16bit.json: x (f32) -> h (f16) -> yh (f32) and
x -> b (bf16) -> yb (f32), all `_to_copy`. The script runs tofu-run with x
set to values that exercise the rounding (ties to even, the largest finite
half and the overflow threshold, subnormals and the underflow threshold,
NaN, infinity, a float32 subnormal), reads yh and yb from --save-reference,
and compares them with torch's x.to(float16).float() and
x.to(bfloat16).float(). Prints `yh: N of N as torch` and likewise `yb`,
the mismatches after them, and exits 1 on any.
"""

import json
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "Utils"))
import npy  # noqa: E402
from reference_file import read_reference  # noqa: E402

VALUES = [
    1.0, 1 + 2**-11,  # f16: a tie, rounds down to even
    1 + 3 * 2**-11,  # f16: a tie, rounds up to even
    1 + 2**-8, 1 + 3 * 2**-8,  # bf16 ties
    1 + 2**-8 + 2**-20,  # bf16: just above a tie
    65504.0, 65519.99, 65520.0,  # f16: largest finite, below and at overflow
    6e-8, 2**-25, 2**-25 * 1.0001,  # f16 subnormals, the underflow tie
    -3.1e-5, 1e-40,  # a negative f16 subnormal, a float32 subnormal
    float("nan"), float("-inf"), 3.0e38,  # bf16 overflow
]


def main():
    plan, graph, work = sys.argv[1:4]
    extra = sys.argv[4:]
    path = os.path.join(work, "x.npy")
    npy.make(path, "f32", str(len(VALUES)), VALUES)
    ref = os.path.join(work, "ref")
    run = subprocess.run(["tofu-run", plan, "--graph", graph, "--input",
                          f"x={path}", "--save-reference", ref] + extra,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True)
    if run.returncode != 0:
        sys.stdout.write(run.stdout)
        return 1
    tensors = {t["name"]: t for t in json.load(open(graph))["tensors"]}
    got = read_reference(ref, tensors)
    x = torch.tensor(VALUES, dtype=torch.float32)
    ok = True
    for name, dtype in (("yh", torch.float16), ("yb", torch.bfloat16)):
        want = x.to(dtype).float()
        same = (got[name] == want) | (got[name].isnan() & want.isnan())
        print(f"{name}: {int(same.sum())} of {len(VALUES)} as torch")
        for v, a, b, s in zip(VALUES, got[name].tolist(), want.tolist(),
                              same.tolist()):
            if not s:
                print(f"  {v!r}: tofu {a!r}, torch {b!r}")
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
