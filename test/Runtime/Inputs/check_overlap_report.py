"""Checks tofu-run --report's per-worker times (docs/Runtime.md, "Overlap").

    check_overlap_report.py [--mpi] REPORT.json [OTHER.json ...]

Each report must give compute_seconds, comm_seconds and wait_seconds for
every worker, non-negative, with some compute on every worker, and bytes
moved equal to comm_bytes. With the thread transport each worker's three
times add up to at most step_seconds (the executor's workers run inside the
timed step); under MPI the other ranks' steps are not timed by rank 0 (one
can start before it), so there the sums may exceed it by the time rank 0
spends between steps, and are only checked against twice step_seconds plus
50 ms. The fullest worker's sum is at least a third of step_seconds. Every
OTHER report (the same plan and steps with another --prefetch-depth) must
move the same bytes, measure the same peaks and give the same losses.
"""
import json
import sys


def fail(message):
    print("error: " + message)
    sys.exit(1)


def check(path, mpi):
    r = json.load(open(path))
    k = r["workers"]
    step = r["step_seconds"]
    times = [r[f] for f in ("compute_seconds", "comm_seconds", "wait_seconds")]
    if any(len(t) != k for t in times):
        fail(f"{path}: expected {k} numbers per time field, got {times}")
    if r["moved_bytes"] != r["comm_bytes"]:
        fail(f"{path}: moved {r['moved_bytes']} != comm_bytes {r['comm_bytes']}")
    sums = []
    for w in range(k):
        compute, comm, wait = (t[w] for t in times)
        if min(compute, comm, wait) < 0 or compute <= 0:
            fail(f"{path}: worker {w}: compute {compute}, comm {comm}, wait {wait}")
        sums.append(compute + comm + wait)
    bound = 2 * step + 0.05 if mpi else step * 1.001 + 1e-5
    if max(sums) > bound:
        fail(f"{path}: a worker's compute + comm + wait {max(sums)} exceeds "
             f"{bound} (step_seconds {step})")
    if max(sums) < step / 3:
        fail(f"{path}: the fullest worker's times add up to {max(sums)}, "
             f"under a third of step_seconds {step}")
    return r


def main():
    args = sys.argv[1:]
    mpi = args[:1] == ["--mpi"]
    if mpi:
        args = args[1:]
    first = check(args[0], mpi)
    for path in args[1:]:
        other = check(path, mpi)
        for field in ("moved_bytes", "peak_bytes_per_worker", "losses"):
            if other[field] != first[field]:
                fail(f"{path}: {field} {other[field]} differs from "
                     f"{args[0]}'s {first[field]}")
    print(f"{len(args)} reports: times per worker consistent, "
          f"moved = comm_bytes = {first['comm_bytes']}")


main()
