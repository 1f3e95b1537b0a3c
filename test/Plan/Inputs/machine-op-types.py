"""Checks that tofu-plan --machine times an op of a type the machine file
calibrated ("ops", tofu-calibrate --graph) from its type's samples, and
other ops from their kind's (docs/StepTime.md, "The model"), on
hand-made machine files (test/Plan/machine-op-types.test).

usage: machine-op-types.py TMP
A graph y = add_Tensor(x, x), z = relu(y) of n elements, planned with one
worker: add_Tensor's samples say 10 ns per point at 1000 points and 4 ns
per point at 10^6 (linear in between, each end's rate beyond it); relu has
none, so it takes the elementwise kind's 1 ns per point. Then a matrix
product whose type's samples record elements: 4 ns per point at
intensity 10, 1 ns at 1000, interpolated in log intensity, no fixed cost.
"""

import json
import math
import subprocess
import sys

tmp = sys.argv[1]
ADD = [[1000, 1e-5], [1e6, 4e-3]]
MM = [[1e6, 4e-3, 1e5], [1e9, 1.0, 1e6]]


def tensor(name, shape, role):
    return {"name": name, "shape": shape, "dtype": "f32", "role": role}


def plan(graph, tensors, ops):
    with open(graph, "w") as f:
        json.dump({"format": "tofu-graph", "version": 1, "tensors": tensors,
                   "ops": ops}, f)
    out = graph + ".plan.json"
    subprocess.run(["tofu-plan", graph, "--workers", "1", "--quiet",
                    "--machine", f"{tmp}.machine.json", "-o", out],
                   check=True)
    return json.load(open(out))["estimated_step_seconds"]["compute"]


with open(f"{tmp}.machine.json", "w") as f:
    kinds = ["gemm", "convolution", "transpose", "elementwise", "reduction"]
    json.dump({"format": "tofu-machine", "version": 1,
               "transport": "threads", "workers": 1, "hardware_threads": 2,
               "kernels": {kind: [[1, 1e-9]] for kind in kinds},
               "ops": {"add_Tensor": ADD, "mm": MM},
               "memory_bandwidth": 4e9, "transport_bandwidth": 1e9,
               "transport_latency": 0}, f)


def add_seconds(n):
    if n <= ADD[0][0]:
        return ADD[0][1] * n / ADD[0][0]
    if n >= ADD[1][0]:
        return ADD[1][1] * n / ADD[1][0]
    f = (n - ADD[0][0]) / (ADD[1][0] - ADD[0][0])
    return ADD[0][1] + f * (ADD[1][1] - ADD[0][1])


for n in [500, 1000, 500500, 4000000]:
    compute = plan(f"{tmp}.add-relu-{n}.json",
                   [tensor("x", [n], "input"), tensor("y", [n], "activation"),
                    tensor("z", [n], "output")],
                   [{"name": "y", "type": "add_Tensor", "inputs": ["x", "x"],
                     "outputs": ["y"], "params": {"alpha": 1}},
                    {"name": "z", "type": "relu", "inputs": ["y"],
                     "outputs": ["z"], "params": {}}])
    expected = add_seconds(n) + 1e-9 * n
    assert abs(compute - expected) <= 1e-9 * expected, (n, compute, expected)
    print(f"add_Tensor + relu of {n}: {compute:.4g} s: ok")


def mm_rate(intensity):
    lo, hi = math.log(10), math.log(1000)
    x = min(max(math.log(intensity), lo), hi)
    return 4e-9 + (x - lo) / (hi - lo) * (1e-9 - 4e-9)


for m, k, n in [(64, 1024, 256), (1024, 1024, 4), (2048, 2048, 2048)]:
    compute = plan(f"{tmp}.mm-{m}-{k}-{n}.json",
                   [tensor("a", [m, k], "input"), tensor("b", [k, n], "input"),
                    tensor("c", [m, n], "output")],
                   [{"name": "c", "type": "mm", "inputs": ["a", "b"],
                     "outputs": ["c"], "params": {}}])
    points = m * n + m * n * k
    intensity = points / (m * k + k * n + m * n)
    expected = points * mm_rate(intensity)
    assert abs(compute - expected) <= 1e-9 * expected, (m, k, n, compute,
                                                        expected)
    print(f"mm {m}x{k}x{n}: intensity {intensity:.1f}, {compute:.4g} s: ok")
