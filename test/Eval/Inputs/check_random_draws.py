"""Evaluates every random op of a graph (test/CodeGen/Inputs/random-ops.json)
with tdl-eval at a given step and compares the draws with the NumPy
definition of TDL's random builtins (tofu_export.philox): bit for bit, but
those that take a logarithm (normal, exponential), which the C library's
and NumPy's log and cos may round
differently (within 1e-13 of 1 + |value|: a few ulps of double). Prints one line per op.

    check_random_draws.py TOFU_EXPORT_DIR TDL_EVAL SPECS GRAPH STEP [--mutate]

--mutate flips the step given to NumPy by one, to show that a wrong counter
fails the check.
"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
import numpy as np  # noqa: E402

from tofu_export import philox, random_ops  # noqa: E402

tdl_eval, specs, graph, step = sys.argv[2], sys.argv[3], sys.argv[4], \
    float(sys.argv[5])
mutate = "--mutate" in sys.argv
doc = json.load(open(graph))
shapes = {t["name"]: t["shape"] for t in doc["tensors"]}
rng = np.random.default_rng(0)
failed = 0
with tempfile.TemporaryDirectory() as tmp:
    step_file = os.path.join(tmp, "step.npy")
    np.save(step_file, np.array(step, dtype=np.float32))
    for op in doc["ops"]:
        if op["type"] not in random_ops.RANDOM_TYPES:
            continue
        shape = shapes[op["outputs"][0]]
        cmd = [tdl_eval, os.path.join(specs, "random.tdl"), "--op",
               op["type"], "--input", step_file]
        tensors = [None, None]
        for k, name in enumerate(op["inputs"][1:]):
            tensors[k] = rng.uniform(0, 1, shapes[name]).astype(np.float32)
            path = os.path.join(tmp, f"{name}.npy")
            np.save(path, tensors[k])
            cmd += ["--input", path]
        for k, v in op["params"].items():
            cmd += ["--param", f"{k}={v}"]
        out = os.path.join(tmp, "out.npy")
        cmd += ["--out-shape", "x".join(map(str, shape)) or "scalar",
                "--out-dtype", "f64", "-o", out]
        subprocess.run(cmd, check=True)
        got = np.load(out)
        want = philox.random_op(op["type"], op["params"],
                                step + (1 if mutate else 0), tuple(shape),
                                *tensors)
        if op["type"].startswith("normal") or op["type"] == "exponential":
            err = np.max(np.abs(got - want) / (1 + np.abs(want))) \
                if got.size else 0.0
            ok = got.shape == want.shape and err <= 1e-13
            how = "within 1e-13"
        else:
            ok = got.shape == want.shape and np.array_equal(got, want)
            how = "bit for bit"
        if ok:
            print(f"{op['name']} ({op['type']}): {got.size} draws, {how}")
        else:
            failed += 1
            print(f"{op['name']} ({op['type']}): differs from "
                  "tofu_export.philox")
print("all match" if not failed else f"{failed} ops differ")
sys.exit(1 if failed else 0)
