"""Checks tofu-run --trace files against the run's --report.

    check_trace.py REPORT.json TRACE.json [TRACE.json.1 ...]

The trace files (one, or one per MPI rank) must hold the spans of every
worker of the report's plan, each span with start <= end, a worker's
kernel and wait spans never overlapping and at most one kernel span per op
and worker. Every wait (worker w, from peer p, op, phase) must have exactly
one send (p to w, same op and phase) and every send one wait, the send
starting before its wait ends. Per worker, the kernel spans must add up to
the report's compute_seconds and the wait spans to its wait_seconds (the
report and the trace are of the same step: run it with --steps 1 under
MPI, where each rank picks its own fastest step). Prints one line.
"""
import collections
import json
import sys


def fail(message):
    print("error: " + message)
    sys.exit(1)


def main():
    report = json.load(open(sys.argv[1]))
    events, workers = [], None
    for path in sys.argv[2:]:
        doc = json.load(open(path))
        workers = doc["workers"]
        if workers != report["workers"]:
            fail(f"{path}: {workers} workers, the report {report['workers']}")
        events += doc["events"]
    by_worker = collections.defaultdict(list)
    for e in events:
        if not 0 <= e["worker"] < workers:
            fail(f"a span of worker {e['worker']}")
        if e["start"] > e["end"]:
            fail(f"a span ends before it starts: {e}")
        by_worker[e["worker"]].append(e)
    if sorted(by_worker) != list(range(workers)):
        fail(f"spans of workers {sorted(by_worker)}, expected 0..{workers - 1}")
    sends, waits = collections.Counter(), collections.Counter()
    send_start = {}
    for w, spans in by_worker.items():
        busy = sorted((e for e in spans if e["kind"] in ("kernel", "wait")),
                      key=lambda e: e["start"])
        for a, b in zip(busy, busy[1:]):
            if b["start"] < a["end"]:
                fail(f"worker {w}: {a['kind']} of op {a['op']} overlaps "
                     f"{b['kind']} of op {b['op']}")
        kernels = collections.Counter(e["op"] for e in spans if e["kind"] == "kernel")
        if not kernels or max(kernels.values()) > 1:
            fail(f"worker {w}: kernel spans per op {dict(kernels)}")
        for kind, total in (("kernel", "compute_seconds"), ("wait", "wait_seconds")):
            traced = sum(e["end"] - e["start"] for e in spans if e["kind"] == kind)
            reported = report[total][w]
            if abs(traced - reported) > 1e-5 + 1e-3 * reported:
                fail(f"worker {w}: {kind} spans add up to {traced:.6f} s, "
                     f"the report's {total} is {reported:.6f} s")
    for e in events:
        if e["kind"] == "send":
            key = (e["worker"], e["peer"], e["op"], e["phase"])
            sends[key] += 1
            send_start[key] = e["start"]
    for e in events:
        if e["kind"] == "wait":
            key = (e["peer"], e["worker"], e["op"], e["phase"])
            waits[key] += 1
            if key in send_start and send_start[key] > e["end"]:
                fail(f"worker {e['worker']} got {key} before it was sent")
    if sends != waits:
        diff = (sends - waits) + (waits - sends)
        fail(f"sends and waits do not pair up: {sorted(diff)[:3]}")
    if not sends:
        fail("no message traced")
    print(f"ok: {workers} workers, {sum(sends.values())} messages paired, "
          "kernel and wait spans add up to the report's times")


if __name__ == "__main__":
    main()
