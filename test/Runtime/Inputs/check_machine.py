"""Checks a machine file written by tofu-calibrate against its documented
format (docs/StepTime.md): every kind of kernel with positive samples in
increasing order of points (with elements for gemm and convolution), positive bandwidths, a non-negative latency,
and the transport and worker count asked for
(test/Runtime/calibrate.test, mpi-calibrate.test).

usage: check_machine.py MACHINE.json TRANSPORT WORKERS
"""

import json
import sys

path, transport, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = json.load(open(path))
assert m["format"] == "tofu-machine" and m["version"] == 1, m
assert m["transport"] == transport, m["transport"]
assert m["workers"] == workers, m["workers"]
assert m["hardware_threads"] >= 1
for kind in ["gemm", "convolution", "transpose", "elementwise", "reduction"]:
    samples = m["kernels"][kind]
    assert samples, kind
    # gemm and convolution samples record the elements read and written
    # ([points, seconds, elements]), the other kinds [points, seconds].
    size = 3 if kind in ("gemm", "convolution") else 2
    assert all(len(s) == size and all(x > 0 for x in s) for s in samples), \
        (kind, samples)
    points = [s[0] for s in samples]
    assert points == sorted(set(points)), (kind, points)
    print(f"{kind}: {len(samples)} samples")
assert set(m["kernels"]) == {"gemm", "convolution", "transpose",
                             "elementwise", "reduction"}, m["kernels"].keys()
assert m["memory_bandwidth"] > 0 and m["transport_bandwidth"] > 0
assert m["transport_latency"] >= 0
print(f"{transport}, {workers} workers: ok")
