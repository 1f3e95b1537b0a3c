"""Checks tofu-plan --machine's estimate against the model of
docs/StepTime.md on machine files whose numbers make it computable by
hand (test/Plan/machine.test).

usage: machine-check.py TMP GRAPH K
Writes machine files for K workers on 2 cores (every kind of kernel 1 or
2 ns per work point) and plans GRAPH with each:
 - slow (2 ns) and fast (1 ns), no latency: compute on the slow machine is
   twice that on the fast one (K <= 2: no worker shares a core), and at
   least the points of the graph's matrix products divided evenly over the
   K workers (a multiply-add is one point);
 - free: bandwidths of 1e18 bytes/s and no latency: the step is its compute
   (the plan keeps the workers' kernels balanced, nothing to wait for);
 - latency: as free, 1 ms per message: at least one message's latency more
   than free, at most one per message of the whole step;
 - total == compute + communication everywhere;
 - K > 2 (more workers than the 2 cores): transport: kernels and copies
   free, 1 GB/s: tofu-calibrate timed the transport with a core per
   worker, so the step's messages need comm_bytes / 1 GB/s core-seconds,
   and the step takes at least that shared by the 2 cores.
"""

import json
import subprocess
import sys

tmp, graph, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
BANDWIDTH, MEMORY = 1e9, 4e9


CORES = 2


def machine(path, ns, bandwidth, memory, latency):
    kinds = ["gemm", "convolution", "transpose", "elementwise", "reduction"]
    with open(path, "w") as f:
        json.dump({"format": "tofu-machine", "version": 1,
                   "transport": "threads", "workers": k,
                   "hardware_threads": CORES,
                   "kernels": {kind: [[1, ns * 1e-9]] for kind in kinds},
                   "memory_bandwidth": memory,
                   "transport_bandwidth": bandwidth,
                   "transport_latency": latency}, f)


def plan(name, ns, bandwidth=BANDWIDTH, memory=MEMORY, latency=0):
    machine(f"{tmp}.{name}.json", ns, bandwidth, memory, latency)
    out = f"{tmp}.{name}.plan.json"
    subprocess.run(["tofu-plan", graph, "--workers", str(k), "--quiet",
                    "--machine", f"{tmp}.{name}.json", "-o", out], check=True)
    return json.load(open(out))


slow, fast = plan("slow", 2), plan("fast", 1)
free = plan("free", 1, 1e18, 1e18)
latency = plan("latency", 1, 1e18, 1e18, 1e-3)
for p in (slow, fast, free, latency):
    e = p["estimated_step_seconds"]
    assert abs(e["total"] - e["compute"] - e["communication"]) <= 1e-12, e
g = json.load(open(graph))
shapes = {t["name"]: t["shape"] for t in g["tensors"]}
points = 0
for op in g["ops"]:
    if op["type"].startswith(("mm", "addmm")):
        a, b = [shapes[i] for i in op["inputs"][-2:]]
        out = shapes[op["outputs"][0]]
        inner = a[0] if op["params"].get("ta") else a[1]
        points += out[0] * out[1] * inner
ratio = (slow["estimated_step_seconds"]["compute"] /
         fast["estimated_step_seconds"]["compute"])
print(f"compute slow/fast: {ratio:.6f}")
floor = points / k * 1e-9
assert fast["estimated_step_seconds"]["compute"] >= floor, floor
print(f"compute {fast['estimated_step_seconds']['compute']:.6g} s >= "
      f"matrix products {floor:.6g} s")
e = free["estimated_step_seconds"]
assert e["communication"] <= 1e-9 * e["compute"], e
print(f"free transport: total == compute: {e['total']:.6g} s")
# Messages: one per pair of workers per op phase and per next step.
ops = len(g["ops"])
bound = (3 * ops + 1) * k * (k - 1) * 1e-3
extra = latency["estimated_step_seconds"]["total"] - e["total"]
assert 1e-3 * (1 - 1e-9) <= extra <= bound, (extra, bound)
print(f"latency: 1 ms <= total - free total <= one per message: "
      f"{extra * 1e3:.3f} ms")
if k > CORES:
    transport = plan("transport", 1e-9, BANDWIDTH, 1e18)
    e = transport["estimated_step_seconds"]
    floor = transport["comm_bytes"] / BANDWIDTH / CORES
    assert e["total"] >= floor * (1 - 1e-9), (e, floor)
    print(f"transport: total {e['total']:.6g} s >= comm_bytes / bandwidth "
          f"/ cores {floor:.6g} s")
