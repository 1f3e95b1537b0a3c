"""Checks a machine file written by tofu-calibrate against its documented
format (docs/StepTime.md): every kind of kernel with positive samples in
increasing order of points (with elements for gemm and convolution), positive bandwidths, a non-negative latency,
and the transport and worker count asked for
(test/Runtime/calibrate.test, mpi-calibrate.test).

With --ops GRAPH.json (a machine file of tofu-calibrate --graph): "ops"
has a list of samples for exactly the op types of the graph whose tensors
are all f32, each with positive samples in increasing order of points;
prints each type's sample points.

usage: check_machine.py MACHINE.json TRANSPORT WORKERS [--ops GRAPH.json]
"""

import json
import sys

path, transport, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = json.load(open(path))
if sys.argv[4:5] == ["--ops"]:
    g = json.load(open(sys.argv[5]))
    dtype = {t["name"]: t["dtype"] for t in g["tensors"]}
    types = {op["type"] for op in g["ops"]
             if all(dtype[t] == "f32" for t in op["inputs"] + op["outputs"])}
    assert set(m["ops"]) == types, (sorted(m["ops"]), sorted(types))
    for op_type in sorted(types):
        samples = m["ops"][op_type]
        assert samples and all(len(s) in (2, 3) and all(x > 0 for x in s)
                               for s in samples), (op_type, samples)
        points = [s[0] for s in samples]
        assert points == sorted(set(points)), (op_type, points)
        print(f"ops {op_type}: points {' '.join(f'{p:g}' for p in points)}")
elif "ops" in m:
    assert False, "a machine file without --graph has no \"ops\""
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
