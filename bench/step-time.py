#!/usr/bin/env python3
"""The calibrated step-time estimate against measured steps
(docs/StepTime.md, "Error table").

For each transport and worker count K: tofu-calibrate measures the machine
(with --transport mpi under mpirun -np K), then for each graph tofu-plan
--machine estimates the step of its plan and tofu-run --report measures it
(step_seconds: the fastest step after the first). The calibration times the
graphs' own op types too (tofu-calibrate --graph). One repeat is the
calibration and the runs back to back, under the same load; --repeats N
repeats it and prints one row per run (with the load average, 1 minute,
before the calibration and after the runs), then the ratio table: per
graph, transport and K, the medians over the repeats of the estimate, of
the measured step and of their ratio (estimate / measured). Timings depend
on what else the machine runs: read the load averages.

usage: /usr/bin/python3 bench/step-time.py [--build DIR] [--workers 2,4]
           [--transports threads,mpi] [--steps N] [--repeats N]
           [--blas-threads N] [--cpu-time] [--no-op-types] [--keep DIR]
           [GRAPH.json ...]
(default graphs: models/mlp.json and models/resnet18.json)
"""

import argparse
import json
import statistics
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
parser.add_argument("--repeats", type=int, default=3,
                    help="calibrate-and-run repeats (medians over them)")
parser.add_argument("--no-op-types", action="store_true",
                    help="calibrate kinds of kernel only (no --graph)")
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


# tofu-calibrate times the generated kernels: the runs use them for every op
# (tofu-run routes convolutions, batch norms and poolings to oneDNN by
# default where it was built with it, kernels the calibration does not time).
help_text = subprocess.run([tool("tofu-run"), "--help"], env=env,
                           capture_output=True, text=True).stdout
generated_only = ["--onednn=false"] if "-onednn" in help_text else []


def load():
    return os.getloadavg()[0]


print(f"tofu-run flags: {' '.join(generated_only) or '(none)'}; "
      f"OPENBLAS_NUM_THREADS={args.blas_threads}")
print(f"{'repeat':>6} {'graph':<10} {'transport':<8} {'K':>2} "
      f"{'estimate_s':>11} {'compute_s':>10} {'comm_s':>9} "
      f"{'measured_s':>11} {'ratio':>6} {'load':>11}")
rows = {}
for repeat in range(1, args.repeats + 1):
    for transport in args.transports.split(","):
        for k in [int(w) for w in args.workers.split(",")]:
            before = load()
            machine = os.path.join(work, f"machine-{transport}-{k}.json")
            calibrate = [tool("tofu-calibrate"), "--workers", str(k),
                         "--transport", transport, "-o", machine] + \
                (["--cpu-time"] if args.cpu_time else [])
            if not args.no_op_types:
                for graph in args.graphs:
                    calibrate += ["--graph", graph]
            if transport == "mpi":
                calibrate = mpirun + ["-np", str(k)] + calibrate
            subprocess.run(calibrate, check=True, env=env,
                           stderr=subprocess.DEVNULL)
            for graph in args.graphs:
                name = os.path.splitext(os.path.basename(graph))[0]
                plan = os.path.join(work, f"{name}-{transport}-{k}.plan.json")
                report = os.path.join(work,
                                      f"{name}-{transport}-{k}.report.json")
                run([tool("tofu-plan"), graph, "--workers", str(k), "--quiet",
                     "--machine", machine, "-o", plan])
                command = [tool("tofu-run"), plan, "--graph", graph,
                           "--steps", str(args.steps), "--transport",
                           transport, "--report", report] + generated_only
                if transport == "mpi":
                    command = mpirun + ["-np", str(k)] + command
                subprocess.run(command, check=True, env=env,
                               stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
                estimate = json.load(open(plan))["estimated_step_seconds"]
                measured = json.load(open(report))["step_seconds"]
                ratio = estimate["total"] / measured
                rows.setdefault((name, transport, k), []).append(
                    (estimate["total"], measured, ratio))
                print(f"{repeat:>6} {name:<10} {transport:<8} {k:>2} "
                      f"{estimate['total']:>11.4f} "
                      f"{estimate['compute']:>10.4f} "
                      f"{estimate['communication']:>9.4f} {measured:>11.4f} "
                      f"{ratio:>6.2f} {before:>5.1f}-{load():<5.1f}",
                      flush=True)

print(f"\nmedians over {args.repeats} repeat(s):")
print(f"{'graph':<10} {'transport':<8} {'K':>2} {'estimate_s':>11} "
      f"{'measured_s':>11} {'ratio':>6} {'error':>7}")
worst = 0.0
for (name, transport, k), values in rows.items():
    ratio = statistics.median(v[2] for v in values)
    worst = max(worst, abs(ratio - 1))
    print(f"{name:<10} {transport:<8} {k:>2} "
          f"{statistics.median(v[0] for v in values):>11.4f} "
          f"{statistics.median(v[1] for v in values):>11.4f} "
          f"{ratio:>6.2f} {ratio - 1:>+7.1%}")
print(f"largest median error {worst:.1%}; files in {work}")
