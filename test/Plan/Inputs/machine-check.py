"""Checks tofu-plan --machine's estimate against the model of
docs/StepTime.md on machine files whose numbers make it computable by
hand (test/Plan/machine.test).

usage: machine-check.py TMP GRAPH K
Writes TMP.slow.json (every kind of kernel 2 ns per work point) and
TMP.fast.json (1 ns), plans GRAPH for K workers with each, and checks:
 - communication == comm_bytes / K * (1 / bandwidth + 2 / memory_bandwidth)
   (no latency in these files);
 - total == compute + communication;
 - compute on the slow machine is twice that on the fast one, and at least
   the points of the graph's matrix products divided evenly over the K
   workers (1 ns each; a multiply-add is one point).
"""

import json
import subprocess
import sys

tmp, graph, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
BANDWIDTH, MEMORY = 1e9, 4e9


def machine(path, ns):
    kinds = ["gemm", "convolution", "transpose", "elementwise", "reduction"]
    with open(path, "w") as f:
        json.dump({"format": "tofu-machine", "version": 1,
                   "transport": "threads", "workers": k,
                   "hardware_threads": 2,
                   "kernels": {kind: [[1, ns * 1e-9]] for kind in kinds},
                   "memory_bandwidth": MEMORY,
                   "transport_bandwidth": BANDWIDTH,
                   "transport_latency": 0}, f)


def plan(name, ns):
    machine(f"{tmp}.{name}.json", ns)
    out = f"{tmp}.{name}.plan.json"
    subprocess.run(["tofu-plan", graph, "--workers", str(k), "--quiet",
                    "--machine", f"{tmp}.{name}.json", "-o", out], check=True)
    return json.load(open(out))


slow, fast = plan("slow", 2), plan("fast", 1)
g = json.load(open(graph))
shapes = {t["name"]: t["shape"] for t in g["tensors"]}
points = 0
for op in g["ops"]:
    if op["type"].startswith(("mm", "addmm")):
        a, b = [shapes[i] for i in op["inputs"][-2:]]
        out = shapes[op["outputs"][0]]
        inner = a[0] if op["params"].get("ta") else a[1]
        points += out[0] * out[1] * inner
for p in (slow, fast):
    e = p["estimated_step_seconds"]
    comm = p["comm_bytes"] / k * (1 / BANDWIDTH + 2 / MEMORY)
    assert abs(e["communication"] - comm) <= 1e-9 * comm, (e, comm)
    assert abs(e["total"] - e["compute"] - e["communication"]) <= 1e-12
print(f"communication == comm_bytes / K * (1/bw + 2/memory bw): "
      f"{fast['estimated_step_seconds']['communication']:.6g} s")
ratio = (slow["estimated_step_seconds"]["compute"] /
         fast["estimated_step_seconds"]["compute"])
print(f"compute slow/fast: {ratio:.6f}")
floor = points / k * 1e-9
assert fast["estimated_step_seconds"]["compute"] >= floor, floor
print(f"compute {fast['estimated_step_seconds']['compute']:.6g} s >= "
      f"matrix products {floor:.6g} s")
