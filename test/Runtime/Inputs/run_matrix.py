"""Plans each graph given for K workers (tofu-plan; K = 1..4 unless
--workers says otherwise), runs each plan with tofu-run --check --report,
and prints one line per run; exits 1 if a run fails, moves other than the
plan's comm_bytes, measures a worker's peak outside [0.98, 1.02] times the
plan's peak_bytes_per_worker, or differs from the unpartitioned run beyond
tolerance
(test/Runtime/models.test, bundled-models.test, mpi-models.test).

--kernel-cache DIR: tofu-run's --kernel-cache (compiled once per graph).
--share-reference: run the unpartitioned graph once per graph (the first
K's run saves it with --save-reference; the others check against it with
--reference).
--tolerance T: tofu-run's --tolerance, and the largest max_rel_error
accepted (default 1e-4, tofu-run's).
--mpirun CMD: each run is `CMD -np K tofu-run ... --transport mpi`, one
worker per MPI rank.
--backend B: tofu-run's --backend (default cpu; cuda-host runs the device
executor on its host emulation, mpi-device-models.test).
Each run's wall time goes to stderr."""

import argparse
import json
import os
import shlex
import subprocess
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("tmp", help="prefix of the plans and reports written")
parser.add_argument("graphs", nargs="+")
parser.add_argument("--workers", default="1,2,3,4",
                    help="comma-separated worker counts")
parser.add_argument("--kernel-cache")
parser.add_argument("--share-reference", action="store_true")
parser.add_argument("--tolerance", type=float, default=1e-4)
parser.add_argument("--mpirun", help="the MPI launcher command, e.g. "
                    "'mpirun --oversubscribe'")
parser.add_argument("--backend", default="cpu")
args = parser.parse_args()

status = 0
for graph in args.graphs:
    name = os.path.splitext(os.path.basename(graph))[0]
    reference = f"{args.tmp}.{name}.reference"
    have_reference = False
    graph_start = time.time()
    for k in [int(w) for w in args.workers.split(",")]:
        plan = f"{args.tmp}.{name}.{k}.plan.json"
        report = f"{args.tmp}.{name}.{k}.report.json"
        start = time.time()
        subprocess.run(["tofu-plan", graph, "--workers", str(k), "--quiet",
                        "-o", plan], check=True)
        planned = time.time()
        command = ["tofu-run", plan, "--graph", graph, "--check",
                   "--report", report, "--tolerance", str(args.tolerance),
                   "--backend", args.backend]
        if args.kernel_cache:
            command += ["--kernel-cache", args.kernel_cache]
        if args.share_reference:
            command += (["--reference", reference] if have_reference
                        else ["--save-reference", reference])
        if args.mpirun:
            command = (shlex.split(args.mpirun) + ["-np", str(k)] + command +
                       ["--transport", "mpi"])
        run = subprocess.run(command, capture_output=True, text=True)
        print(f"{name} K={k}: tofu-plan {planned - start:.1f} s, tofu-run"
              f" {time.time() - planned:.1f} s", file=sys.stderr, flush=True)
        if run.returncode != 0:
            print(f"{name} K={k}: tofu-run exit {run.returncode}\n"
                  f"{run.stdout}{run.stderr}")
            status = 1
            continue
        have_reference = args.share_reference
        r = json.load(open(report))
        exact = r["moved_bytes"] == r["comm_bytes"]
        # Each worker's measured peak within 2% of the plan's prediction.
        peaks = list(zip(r["peak_bytes_per_worker"],
                         r["plan_peak_bytes_per_worker"]))
        ratios = [m / p if p > 0 else float("inf") for m, p in peaks]
        peak_ok = len(peaks) == k and all(0.98 <= x <= 1.02 for x in ratios)
        ok = (exact and r["workers"] == k and peak_ok and
              r["max_rel_error"] <= args.tolerance)
        print(f"{name} K={k}: moved {r['moved_bytes']} comm {r['comm_bytes']}"
              f" {'exact' if exact else 'DIFFERENT'},"
              f" peak/plan {max(ratios, default=0):.3f}"
              f"{'' if peak_ok else ' OUTSIDE [0.98, 1.02]'},"
              f" max rel error {r['max_rel_error']:.1e}:"
              f" {'ok' if ok else 'FAILED'}", flush=True)
        status |= 0 if ok else 1
    print(f"{name}: {time.time() - graph_start:.1f} s", file=sys.stderr,
          flush=True)
    if os.path.exists(reference):
        os.remove(reference)
sys.exit(status)
