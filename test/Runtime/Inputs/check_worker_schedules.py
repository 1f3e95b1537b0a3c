"""Checks that under mpirun each rank scheduled only its own worker's
pieces (docs/Runtime.md, "Under MPI").

    check_worker_schedules.py MPI.json THREADS.json

MPI.json and THREADS.json are --report files of one plan run with
--transport mpi and --transport threads. Both must move comm_bytes and
measure the plan's peaks, and give the same losses. Under MPI every
worker's process must hold one worker's pieces and fewer pieces than the
whole schedule (what the threads run's process holds: every worker's);
each piece between two workers is in both of their schedules, so the
ranks' pieces add up to at least the whole schedule's. A rank lowers the
whole plan but the other workers' iteration boxes: every rank's
lowered_boxes must be alike and fewer than the threads run's by a
multiple of K - 1 (the ops' iteration boxes of the K - 1 other workers),
and each process's lowering and executor start-up times are reported.
Prints one line.
"""
import json
import sys


def fail(message):
    print("error: " + message)
    sys.exit(1)


def main():
    mpi_path, threads_path = sys.argv[1:3]
    mpi, threads = json.load(open(mpi_path)), json.load(open(threads_path))
    for path, r in ((mpi_path, mpi), (threads_path, threads)):
        if r["moved_bytes"] != r["comm_bytes"]:
            fail(f"{path}: moved {r['moved_bytes']} != {r['comm_bytes']}")
        if r["peak_bytes_per_worker"] != r["plan_peak_bytes_per_worker"]:
            fail(f"{path}: peaks {r['peak_bytes_per_worker']} != plan's "
                 f"{r['plan_peak_bytes_per_worker']}")
    if mpi["losses"] != threads["losses"]:
        fail(f"losses differ: {mpi['losses']} and {threads['losses']}")
    k = mpi["workers"]
    if threads["scheduled_workers_per_worker"] != [k] * k:
        fail(f"threads: scheduled workers "
             f"{threads['scheduled_workers_per_worker']}, not {k} each")
    whole = set(threads["scheduled_pieces_per_worker"])
    if len(whole) != 1:
        fail(f"threads: one process, but piece counts {sorted(whole)}")
    whole = whole.pop()
    if mpi["scheduled_workers_per_worker"] != [1] * k:
        fail(f"mpi: scheduled workers {mpi['scheduled_workers_per_worker']}, "
             f"not 1 each")
    pieces = mpi["scheduled_pieces_per_worker"]
    if max(pieces) >= whole:
        fail(f"mpi: a rank holds {max(pieces)} pieces of the whole {whole}")
    if sum(pieces) < whole:
        fail(f"mpi: the ranks hold {sum(pieces)} pieces, fewer than the "
             f"whole schedule's {whole}")
    boxes = threads["lowered_boxes_per_worker"]
    if len(set(boxes)) != 1 or boxes[0] <= 0:
        fail(f"threads: one process, but lowered boxes {boxes}")
    lowered = mpi["lowered_boxes_per_worker"]
    dropped = boxes[0] - lowered[0]
    if len(set(lowered)) != 1 or dropped <= 0 or dropped % (k - 1):
        fail(f"mpi: lowered boxes {lowered}; the whole plan has "
             f"{boxes[0]}: not fewer by the other {k - 1} workers' "
             f"iteration boxes on every rank")
    for r in (mpi, threads):
        for key in ("lowering_seconds_per_worker",
                    "executor_start_seconds_per_worker"):
            if len(r[key]) != k or min(r[key]) < 0:
                fail(f"{key}: {r[key]}")
    print(f"ok: {k} ranks each scheduled 1 worker, {min(pieces)}-"
          f"{max(pieces)} of the whole schedule's {whole} pieces; same "
          f"bytes, peaks and losses as threads; each lowered {lowered[0]} "
          f"of the whole plan's {boxes[0]} boxes ({dropped // (k - 1)} "
          f"iteration boxes per other worker left out)")


if __name__ == "__main__":
    main()
