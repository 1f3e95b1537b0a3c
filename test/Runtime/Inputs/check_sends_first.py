"""Checks that a worker takes a phase's sends before its receives
(tofu-run --sends-first, docs/Runtime.md "Overlap").

    check_sends_first.py ON.json ON-TRACE OFF.json OFF-TRACE

ON.json and OFF.json are --report files of the same plan and steps with
--sends-first on and off, ON-TRACE and OFF-TRACE the --trace files of
worker 1 (the trace file, or its .1 under MPI). Both runs must move
comm_bytes, measure the plan's peaks and give the same losses. Worker 0
receives from no lower-numbered worker, so it counts no phase either way.
With it on, worker 1 must count some phase taken sends first; with it off,
none, and as many kept receives first as the first run counted phases.
In worker 1's traces, of the phases (op, phase) in which it both sends and
waits, ON's must all send before their first wait where the report counts
no phase kept, and OFF's must all wait first. Prints one line.
"""
import collections
import json
import sys


def fail(message):
    print("error: " + message)
    sys.exit(1)


def two_way(path):
    """Worker 1's phases with a send and a wait: how many sent first."""
    first = collections.defaultdict(dict)
    for e in json.load(open(path))["events"]:
        if e["worker"] != 1 or e["kind"] not in ("send", "wait"):
            continue
        key = (e["op"], e["phase"])
        first[key].setdefault(e["kind"], e["start"])
    both = [v for v in first.values() if len(v) == 2]
    return len(both), sum(v["send"] < v["wait"] for v in both)


def main():
    on, on_trace, off, off_trace = sys.argv[1:5]
    reports = [json.load(open(on)), json.load(open(off))]
    for path, r in zip((on, off), reports):
        if r["moved_bytes"] != r["comm_bytes"]:
            fail(f"{path}: moved {r['moved_bytes']} != {r['comm_bytes']}")
        if r["peak_bytes_per_worker"] != r["plan_peak_bytes_per_worker"]:
            fail(f"{path}: peaks {r['peak_bytes_per_worker']} != plan's "
                 f"{r['plan_peak_bytes_per_worker']}")
    a, b = reports
    if a["losses"] != b["losses"]:
        fail(f"losses differ: {a['losses']} and {b['losses']}")
    sf, rf = a["sends_first_phases"], a["receives_first_phases"]
    if sf[0] or rf[0] or b["sends_first_phases"][0] or b["receives_first_phases"][0]:
        fail(f"worker 0 counts phases: {sf} {rf}")
    if sf[1] < 1:
        fail(f"{on}: worker 1 took no phase sends first ({sf}, {rf})")
    if any(b["sends_first_phases"]) or b["receives_first_phases"][1] != sf[1] + rf[1]:
        fail(f"{off}: {b['sends_first_phases']} {b['receives_first_phases']}, "
             f"expected none sends first and {sf[1] + rf[1]} receives first")
    n_on, first_on = two_way(on_trace)
    n_off, first_off = two_way(off_trace)
    if n_on < 1 or n_on != n_off:
        fail(f"two-way phases in the traces: {n_on} and {n_off}")
    if rf[1] == 0 and first_on != n_on:
        fail(f"{on_trace}: {first_on} of {n_on} two-way phases sent first")
    if first_off:
        fail(f"{off_trace}: {first_off} of {n_off} two-way phases sent first")
    print(f"ok: worker 1 took {sf[1]} phases sends first "
          f"({first_on} of {n_on} two-way phases in the trace), "
          f"0 with --sends-first=false; same peaks, bytes and losses")


if __name__ == "__main__":
    main()
