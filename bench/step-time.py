#!/usr/bin/env python3
"""The calibrated step-time estimate against measured steps
(docs/StepTime.md, "Error table").

For each transport and worker count K: tofu-calibrate measures the machine
(with --transport mpi under mpirun -np K), then for each graph tofu-plan
--machine estimates the step of its plan and tofu-run --report measures it
(step_seconds: the fastest step after the first). Prints one row per run:
estimate, measured, and estimate/measured - 1. Timings depend on what else
the machine runs: run it on a quiet machine, and read the load average it
prints.

usage: /usr/bin/python3 bench/step-time.py [--build DIR] [--workers 2,4]
           [--transports threads,mpi] [--steps N] [--blas-threads N] [--cpu-time]
           [--keep DIR] [GRAPH.json ...]
(default graphs: models/mlp.json and models/resnet18.json)
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
parser = argparse.ArgumentParser()
parser.add_argument("graphs", nargs="*",
                    default=[os.path.join(root, "models", "mlp.json"),
                             os.path.join(root, "models", "resnet18.json")])
parser.add_argument("--build", default=os.path.join(root, "build"))
parser.add_argument("--workers", default="2,4")
parser.add_argument("--transports", default="threads,mpi")
parser.add_argument("--steps", type=int, default=4)
parser.add_argument("--blas-threads", default="1",
                    help="OPENBLAS_NUM_THREADS for tofu-calibrate and "
                    "tofu-run alike (default 1: K workers on K cores; more "
                    "threads than cores make OpenBLAS's spinning threads "
                    "erratic)")
parser.add_argument("--cpu-time", action="store_true",
                    help="calibrate with tofu-calibrate --cpu-time (a quiet "
                    "machine's kernel times on a loaded one)")
parser.add_argument("--keep", help="folder for the machine files, plans "
                    "and reports (default: a temporary one)")
args = parser.parse_args()

bindir = os.path.join(args.build, "bin")
work = args.keep or tempfile.mkdtemp(prefix="tofu-step-time-")
os.makedirs(work, exist_ok=True)
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OPENBLAS_NUM_THREADS=args.blas_threads)
mpirun = [shutil.which("mpirun") or "mpirun", "--oversubscribe"]


def tool(name):
    return os.path.join(bindir, name)


def run(command):
    subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)


print(f"load average before: {os.getloadavg()[0]:.2f}")
print(f"{'graph':<10} {'transport':<8} {'K':>2} {'estimate_s':>11} "
      f"{'compute_s':>10} {'comm_s':>9} {'measured_s':>11} {'error':>7}")
worst = 0.0
for transport in args.transports.split(","):
    for k in [int(w) for w in args.workers.split(",")]:
        machine = os.path.join(work, f"machine-{transport}-{k}.json")
        calibrate = [tool("tofu-calibrate"), "--workers", str(k),
                     "--transport", transport, "-o", machine] + \
            (["--cpu-time"] if args.cpu_time else [])
        if transport == "mpi":
            calibrate = mpirun + ["-np", str(k)] + calibrate
        subprocess.run(calibrate, check=True, env=env,
                       stderr=subprocess.DEVNULL)
        for graph in args.graphs:
            name = os.path.splitext(os.path.basename(graph))[0]
            plan = os.path.join(work, f"{name}-{transport}-{k}.plan.json")
            report = os.path.join(work, f"{name}-{transport}-{k}.report.json")
            run([tool("tofu-plan"), graph, "--workers", str(k), "--quiet",
                 "--machine", machine, "-o", plan])
            command = [tool("tofu-run"), plan, "--graph", graph, "--steps",
                       str(args.steps), "--transport", transport, "--report",
                       report]
            if transport == "mpi":
                command = mpirun + ["-np", str(k)] + command
            subprocess.run(command, check=True, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            estimate = json.load(open(plan))["estimated_step_seconds"]
            measured = json.load(open(report))["step_seconds"]
            error = estimate["total"] / measured - 1
            worst = max(worst, abs(error))
            print(f"{name:<10} {transport:<8} {k:>2} {estimate['total']:>11.4f} "
                  f"{estimate['compute']:>10.4f} "
                  f"{estimate['communication']:>9.4f} {measured:>11.4f} "
                  f"{error:>+7.1%}", flush=True)
print(f"load average after: {os.getloadavg()[0]:.2f}; largest error "
      f"{worst:.1%}; files in {work}")
