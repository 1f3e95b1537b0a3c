"""Checks the intensity model of tofu-plan --machine's gemm estimate
(docs/StepTime.md, "The model") on hand-made machine files
(test/Plan/machine-intensity.test).

usage: machine-intensity.py TMP
Writes one-op graphs (an mm of m x k by k x n) and a machine file whose
gemm samples record elements: a fixed cost F (the smallest sample), a
narrow sample at intensity 10 and a square one at intensity 1000 with
different seconds per point. Plans each graph with one worker and checks
its compute against F + points * rate, the rate interpolated in log
intensity (points / elements read and written) and clamped at the ends.
"""

import json
import math
import subprocess
import sys

tmp = sys.argv[1]
F = 1e-6
# (points, seconds, elements): the fixed-cost call, then 4 ns per point at
# intensity 10 and 1 ns per point at intensity 1000.
SAMPLES = [[8.0, F, 4.0], [1e6, F + 1e6 * 4e-9, 1e5],
           [1e9, F + 1e9 * 1e-9, 1e6]]


def per_point(intensity):
    lo, hi = math.log(10), math.log(1000)
    x = min(max(math.log(intensity), lo), hi)
    return 4e-9 + (x - lo) / (hi - lo) * (1e-9 - 4e-9)


with open(f"{tmp}.machine.json", "w") as f:
    kinds = ["gemm", "convolution", "transpose", "elementwise", "reduction"]
    json.dump({"format": "tofu-machine", "version": 1,
               "transport": "threads", "workers": 1, "hardware_threads": 2,
               "kernels": {kind: SAMPLES if kind == "gemm" else [[1, 1e-9]]
                           for kind in kinds},
               "memory_bandwidth": 4e9, "transport_bandwidth": 1e9,
               "transport_latency": 0}, f)

for m, k, n in [(512, 512, 512), (1024, 1024, 4), (2048, 8, 2048),
                (64, 1024, 256), (4096, 4096, 4096)]:
    graph = f"{tmp}.mm-{m}-{k}-{n}.json"
    tensor = lambda name, shape, role: {"name": name, "shape": shape,
                                        "dtype": "f32", "role": role}
    with open(graph, "w") as f:
        json.dump({"format": "tofu-graph", "version": 1,
                   "tensors": [tensor("a", [m, k], "input"),
                               tensor("b", [k, n], "input"),
                               tensor("c", [m, n], "output")],
                   "ops": [{"name": "c", "type": "mm", "inputs": ["a", "b"],
                            "outputs": ["c"], "params": {}}]}, f)
    out = f"{tmp}.mm-{m}-{k}-{n}.plan.json"
    subprocess.run(["tofu-plan", graph, "--workers", "1", "--quiet",
                    "--machine", f"{tmp}.machine.json", "-o", out],
                   check=True)
    compute = json.load(open(out))["estimated_step_seconds"]["compute"]
    points = m * n + m * n * k
    intensity = points / (m * k + k * n + m * n)
    expected = F + points * per_point(intensity)
    assert abs(compute - expected) <= 1e-9 * expected, (m, k, n, compute,
                                                        expected)
    print(f"mm {m}x{k}x{n}: intensity {intensity:.1f}, "
          f"{points / compute * 1e-9:.3f} G points/s: ok")
