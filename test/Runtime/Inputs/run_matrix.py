"""Plans each graph given for K workers (tofu-plan; K = 1..4 unless
--workers lists them), runs each plan with tofu-run --check --report, and
prints one line per run; exits 1 if a run fails, moves other than the plan's
comm_bytes, or differs from the unpartitioned run beyond tolerance
(test/Runtime/models.test). With --mpirun CMD each run is
`CMD -np K tofu-run ... --transport mpi`, one worker per MPI rank
(test/Runtime/mpi-models.test)."""

import argparse
import json
import os
import shlex
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument("tmp", help="prefix of the plans and reports written")
parser.add_argument("graphs", nargs="+")
parser.add_argument("--workers", default="1,2,3,4",
                    help="comma-separated worker counts")
parser.add_argument("--mpirun", help="the MPI launcher command, e.g. "
                    "'mpirun --oversubscribe'")
args = parser.parse_args()

status = 0
for graph in args.graphs:
    name = os.path.splitext(os.path.basename(graph))[0]
    for k in [int(k) for k in args.workers.split(",")]:
        plan = f"{args.tmp}.{name}.{k}.plan.json"
        report = f"{args.tmp}.{name}.{k}.report.json"
        subprocess.run(["tofu-plan", graph, "--workers", str(k), "--quiet",
                        "-o", plan], check=True)
        command = ["tofu-run", plan, "--graph", graph, "--check",
                   "--report", report]
        if args.mpirun:
            command = (shlex.split(args.mpirun) + ["-np", str(k)] + command +
                       ["--transport", "mpi"])
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode != 0:
            print(f"{name} K={k}: tofu-run exit {run.returncode}\n"
                  f"{run.stdout}{run.stderr}")
            status = 1
            continue
        r = json.load(open(report))
        exact = r["moved_bytes"] == r["comm_bytes"]
        ok = (exact and r["workers"] == k and
              len(r["peak_bytes_per_worker"]) == k and
              r["max_rel_error"] <= 1e-4)
        print(f"{name} K={k}: moved {r['moved_bytes']} comm {r['comm_bytes']}"
              f" {'exact' if exact else 'DIFFERENT'},"
              f" max rel error {r['max_rel_error']:.1e}:"
              f" {'ok' if ok else 'FAILED'}")
        status |= 0 if ok else 1
sys.exit(status)
