"""Plans each graph given for K workers (tofu-plan), runs each plan for one
step (--steps N: N steps; the report's peak is the largest step's) with
tofu-run --report on each backend given, and prints per run the
smallest and largest measured/predicted peak over the workers (the report's
peak_bytes_per_worker over the plan's); exits 1 if a run fails or a ratio
lies outside [0.98, 1.02] (test/Runtime/peak-prediction.test).

--workers: comma-separated worker counts (default 2,4).
--backends: comma-separated tofu-run backends (default cpu).
--kernel-cache DIR: tofu-run's --kernel-cache."""

import argparse
import json
import os
import subprocess
import sys

parser = argparse.ArgumentParser()
parser.add_argument("tmp", help="prefix of the plans and reports written")
parser.add_argument("graphs", nargs="+")
parser.add_argument("--workers", default="2,4")
parser.add_argument("--backends", default="cpu")
parser.add_argument("--kernel-cache")
parser.add_argument("--steps", type=int, default=1)
args = parser.parse_args()

status = 0
for graph in args.graphs:
    name = os.path.splitext(os.path.basename(graph))[0]
    for k in [int(w) for w in args.workers.split(",")]:
        plan = f"{args.tmp}.{name}.{k}.plan.json"
        subprocess.run(["tofu-plan", graph, "--workers", str(k), "--quiet",
                        "-o", plan], check=True)
        predicted = json.load(open(plan))["peak_bytes_per_worker"]
        for backend in args.backends.split(","):
            report = f"{args.tmp}.{name}.{k}.{backend}.report.json"
            command = ["tofu-run", plan, "--graph", graph, "--report", report,
                       "--backend", backend, "--steps", str(args.steps)]
            if args.kernel_cache:
                command += ["--kernel-cache", args.kernel_cache]
            run = subprocess.run(command, capture_output=True, text=True)
            where = f"{name} K={k} {backend}" + (
                f" {args.steps} steps" if args.steps != 1 else "")
            if run.returncode != 0:
                print(f"{where}: tofu-run exit {run.returncode}\n"
                      f"{run.stdout}{run.stderr}")
                status = 1
                continue
            measured = json.load(open(report))["peak_bytes_per_worker"]
            if len(measured) != k or len(predicted) != k:
                print(f"{where}: {len(measured)} measured and "
                      f"{len(predicted)} predicted peaks for {k} workers")
                status = 1
                continue
            ratios = [m / p for m, p in zip(measured, predicted)]
            ok = all(0.98 <= r <= 1.02 for r in ratios)
            print(f"{where}: measured/predicted {min(ratios):.3f}.."
                  f"{max(ratios):.3f} (fullest worker {max(measured)} bytes):"
                  f" {'ok' if ok else 'OUTSIDE [0.98, 1.02]'}", flush=True)
            status |= 0 if ok else 1
sys.exit(status)
