#!/usr/bin/python3
"""Training steps of the bundled MLP and ResNet-18: Tofu against PyTorch.

In one run, for each of models/mlp.json and models/resnet18.json and each
worker count K:
  - tofu-plan plans the graph for K workers and tofu-run runs the plan's
    steps (the generated kernels, OpenBLAS GEMMs, oneDNN convolutions,
    batch norms and poolings where tofu-run was built with oneDNN), with
    --threads-per-worker T/K (at least 1), and reports the step time, the
    bytes moved against the plan's comm_bytes and the fullest worker's
    measured peak;
  - PyTorch 1.13 eager times the same training step (forward, cross-entropy
    loss, backward, SGD update with lr 0.1) of the same model on T threads
    (torch.set_num_threads, and openblas_set_num_threads on the system
    OpenBLAS torch loaded, which torch's own call does not reach):
    models/mlp.py at batch 64, torchvision's
    resnet18 at batch 32, 64x64 images, 100 classes (models/README.md);
and prints Tofu's step time over PyTorch's, both measured in this run, and
over Tofu's K = 1 step, with the load average (1 minute) at each
measurement: the machine may be shared, so compare ratios within one run.

Threads: T = --threads in total per side (default 1). Both sides time
the training step alone (tofu-run's report times Executor::runStep, not
the process's start, planning or kernel compilation; PyTorch the step's
Python calls): the best of --steps steps after a warm-up step. Each row
(K, transport) is measured --rounds times, each Tofu measurement followed
by a PyTorch one, and each row's ratio is against the PyTorch runs that
alternated with it: both sides' best over the same number of steps (the
best of more samples is lower on a loaded machine, which favoured
PyTorch before 2026-11-26 13:31 UTC, when every row's ratio took
PyTorch's best over all rows).
On a loaded machine wall times follow the other jobs; --cpu-time also
prints each side's CPU seconds per step (user + system of all threads and
processes), which the load inflates much less. Tofu's is the CPU time of a
run of N + 1 steps minus that of a 1-step run, over N, with N = --steps or
more, enough steps for about --cpu-seconds of steps: the two runs' start-ups
(about 0.35 s for the MLP, varying by some 20 ms) cancel only on average,
and over 3 MLP steps of 20 ms their difference alone moved the ratio by
some 30%.

usage: bench/runtime-vs-torch.py [--build DIR] [--steps N] [--rounds R]
                                 [--models mlp,resnet18] [--workers 1,2]
                                 [--threads T] [--no-onednn] [--cpu-time]
                                 [--cpu-seconds S] [--unfused-epilogues]
"""

import argparse
import ctypes
import math
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402


def mlp_case():
    sys.path.insert(0, os.path.join(ROOT, "models"))
    from mlp import MLP
    return MLP(), (torch.rand(64, 1024),), torch.randint(0, 10, (64,))


def resnet18_case():
    import torchvision
    model = torchvision.models.resnet18(num_classes=100)
    return model, (torch.rand(32, 3, 64, 64),), torch.randint(0, 100, (32,))


def token_case(make, batch, length, vocab):
    """A tofu-export zoo model whose forward(tokens, targets) is the loss."""
    model = make()
    tokens = torch.randint(0, vocab, (batch, length))
    return model, (tokens, torch.randint(0, vocab, (batch, length))), None


def gpt2l_case():
    sys.path.insert(0, os.path.join(ROOT, "tools", "tofu-export"))
    from tofu_export.zoo.gpt import GPT
    return token_case(lambda: GPT(2, 512, 8, 128, 8192), 8, 128, 8192)


def rnn2l_case():
    sys.path.insert(0, os.path.join(ROOT, "tools", "tofu-export"))
    from tofu_export.zoo.lstm import LSTMLanguageModel
    return token_case(lambda: LSTMLanguageModel(2, 1024, 4096, 5), 32, 5,
                      4096)


# Each case: the model, its inputs and the target (None: the model returns
# its loss), as models/README.md exports them; the optimizer as exported.
CASES = {"mlp": mlp_case, "resnet18": resnet18_case, "gpt-2l": gpt2l_case,
         "rnn-2l": rnn2l_case}
ADAM = {"gpt-2l"}


def load():
    return os.getloadavg()[0]


def openblas_set_num_threads(threads):
    """Gives the OpenBLAS that torch loaded `threads` threads; returns its
    path and the threads it then reports (openblas_get_num_threads), or None
    if torch loaded none. torch.set_num_threads does not reach a system
    OpenBLAS (BLAS_INFO=generic), which otherwise runs every GEMM on every
    core while tofu-run's run on --threads-per-worker."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "openblas" in line}
    for path in sorted(paths):
        lib = ctypes.CDLL(path)
        if hasattr(lib, "openblas_set_num_threads"):
            lib.openblas_set_num_threads(threads)
            return path, lib.openblas_get_num_threads()
    return None


def torch_step_seconds(name, steps, threads):
    """The best time of a training step of PyTorch eager on `threads`, and
    the mean CPU time (all threads, user + system) of the timed steps."""
    torch.set_num_threads(threads)
    openblas_set_num_threads(threads)
    model, inputs, y = CASES[name]()
    model.train()
    opt = (torch.optim.Adam(model.parameters(), lr=1e-3) if name in ADAM
           else torch.optim.SGD(model.parameters(), lr=0.1))
    best, cpu = float("inf"), 0.0
    for s in range(steps + 1):
        start, start_cpu = time.perf_counter(), time.process_time()
        opt.zero_grad(set_to_none=True)
        out = model(*inputs)
        loss = out if y is None else F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        if s:
            best = min(best, time.perf_counter() - start)
            cpu += time.process_time() - start_cpu
    return best, cpu / steps


def children_cpu():
    """User + system seconds of the finished child processes."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def tofu_run(args, graph, plan, k, transport, threads_per_worker, report,
             steps):
    """tofu-run's report of `steps` steps (step_seconds: the best after the
    first), under mpirun -np K with the MPI transport, and the CPU seconds
    of the run (all its processes and threads)."""
    cmd = [os.path.join(args.build, "bin", "tofu-run"), plan, "--graph", graph,
           "--steps", str(steps), "--threads-per-worker",
           str(threads_per_worker), "--report", report]
    if transport == "mpi":
        cmd = ["mpirun", "--oversubscribe", "-np", str(k)] + cmd + \
            ["--transport", "mpi"]
    if args.no_onednn:
        cmd.append("--onednn=false")
    if args.unfused_epilogues:
        cmd.append("--fuse-epilogues=false")
    env = dict(os.environ, OMP_NUM_THREADS=str(threads_per_worker),
               OPENBLAS_NUM_THREADS=str(threads_per_worker),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cpu = children_cpu()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, env=env)
    cpu = children_cpu() - cpu
    with open(report) as f:
        return json.load(f), cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--models", default="mlp,resnet18")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--transports", default="threads",
                    help="threads, mpi or threads,mpi (MPI under mpirun "
                    "--oversubscribe -np K; K=1 runs on threads only)")
    ap.add_argument("--threads", type=int, default=1,
                    help="total threads per side: PyTorch's, and Tofu's "
                         "workers times threads per worker")
    ap.add_argument("--rounds", type=int, default=2,
                    help="measurements of each side per K, alternating; "
                         "the best counts")
    ap.add_argument("--no-onednn", action="store_true",
                    help="run tofu-run with --onednn=false")
    ap.add_argument("--unfused-epilogues", action="store_true",
                    help="run tofu-run with --fuse-epilogues=false (a GEMM's "
                         "affine epilogue, the SGD update, after the GEMM, "
                         "not in it)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="also the CPU time per step of each side (user + "
                    "system, all threads and processes; Tofu's from a "
                    "run of N + 1 steps minus a 1-step run, over N: "
                    "--steps, or more to fill --cpu-seconds), the best "
                    "round's")
    ap.add_argument("--cpu-seconds", type=float, default=1.0,
                    help="with --cpu-time: Tofu's CPU runs take at least "
                    "this many seconds of steps (default 1), so that the "
                    "start-ups' difference is a small part of a step")
    args = ap.parse_args()
    workers = [int(k) for k in args.workers.split(",")]
    transports = args.transports.split(",")
    if not set(transports) <= {"threads", "mpi"}:
        ap.error("--transports: threads, mpi or both")
    unknown = set(args.models.split(",")) - set(CASES)
    if unknown:
        ap.error(f"--models: unknown {', '.join(sorted(unknown))} (known: "
                 f"{', '.join(CASES)})")
    print(f"{os.cpu_count()} cores; {args.threads} thread(s) in total per "
          f"side; best of {args.steps} steps, {args.rounds} rounds; "
          f"oneDNN {'off' if args.no_onednn else 'on'}; GEMM epilogues "
          f"{'unfused' if args.unfused_epilogues else 'fused'}; load average "
          f"(1 min) {load():.2f} at the start")
    blas = openblas_set_num_threads(args.threads)
    print("PyTorch's BLAS: " + (f"{blas[0]}, {blas[1]} thread(s)" if blas
                                else "no OpenBLAS loaded"))
    tmp = tempfile.mkdtemp(prefix="tofu-bench-")
    for name in args.models.split(","):
        graph = os.path.join(ROOT, "models", name + ".json")
        torch_s = torch_cpu = float("inf")
        torch_loads = []
        rows = []
        for k in workers:
            plan = os.path.join(tmp, f"{name}.{k}.plan.json")
            subprocess.run([os.path.join(args.build, "bin", "tofu-plan"), graph,
                            "--workers", str(k), "--quiet", "-o", plan],
                           check=True)
            per_worker = max(1, args.threads // k)
            for transport in transports if k > 1 else ["threads"]:
                best, loads, cpu = None, [], float("inf")
                paired = float("inf")  # PyTorch's best in this row's rounds
                report = os.path.join(tmp, f"{name}.{k}.report.json")
                for _ in range(args.rounds):
                    loads.append(load())
                    r, cpu_all = tofu_run(args, graph, plan, k, transport,
                                          per_worker, report, args.steps + 1)
                    if args.cpu_time:
                        n = max(args.steps, math.ceil(
                            args.cpu_seconds / max(r["step_seconds"], 1e-6)))
                        if n != args.steps:
                            _, cpu_all = tofu_run(args, graph, plan, k,
                                                  transport, per_worker,
                                                  report, n + 1)
                        _, cpu_one = tofu_run(args, graph, plan, k, transport,
                                              per_worker, report, 1)
                        cpu = min(cpu, (cpu_all - cpu_one) / n)
                    if best is None or \
                            r["step_seconds"] < best["step_seconds"]:
                        best = r
                    # PyTorch alternates with every Tofu measurement, so that
                    # a change of the load affects both sides alike.
                    torch_loads.append(load())
                    wall, step_cpu = torch_step_seconds(name, args.steps,
                                                        args.threads)
                    paired = min(paired, wall)
                    torch_s, torch_cpu = min(torch_s, wall), min(torch_cpu,
                                                                 step_cpu)
                rows.append((k, transport, per_worker, best, loads, cpu,
                             paired))
        print(f"\n{name}: PyTorch eager {torch_s:.4f} s on {args.threads} "
              f"thread(s)"
              + (f", {torch_cpu:.4f} s CPU per step" if args.cpu_time else "")
              + f" (load {min(torch_loads):.1f}-{max(torch_loads):.1f})")
        print(f"  {'K':>2} {'transport':>9} {'thr/w':>5} {'step_s':>8} "
              f"{'torch_s':>8} {'vs torch':>8} {'vs K=1':>7} {'wait':>6} {'load':>9} "
              f"{'moved_bytes':>12} {'comm_bytes':>12} {'peak/worker':>12} "
              f"{'oneDNN calls':>12}"
              + (f" {'cpu/step':>9} {'cpu vs torch':>12}" if args.cpu_time
                 else ""))
        one = rows[0][3]["step_seconds"]
        for k, transport, per_worker, r, loads, cpu, paired in rows:
            moved, comm = r["moved_bytes"], r["comm_bytes"]
            calls = r.get("onednn_calls", {}).get("total", 0)
            # The largest worker's wait, as a share of its step.
            wait = max(r.get("wait_seconds", [0])) / r["step_seconds"]
            print(f"  {k:>2} {transport:>9} {per_worker:>5} "
                  f"{r['step_seconds']:>8.4f} {paired:>8.4f} "
                  f"{r['step_seconds'] / paired:>7.2f}x "
                  f"{r['step_seconds'] / one:>6.2f}x {wait:>6.1%} "
                  f"{min(loads):>4.1f}-{max(loads):<4.1f} {moved:>12} {comm:>12} "
                  f"{max(r['peak_bytes_per_worker']):>12} {calls:>12}"
                  + (f" {cpu:>9.4f} {cpu / torch_cpu:>11.2f}x"
                     if args.cpu_time else "")
                  + ("" if moved == comm else "  MOVED != COMM"))


if __name__ == "__main__":
    main()
