"""Plans each graph given for K = 1..4 workers (tofu-plan), runs each plan
with tofu-run --check --report, and prints one line per run; exits 1 if a
run fails, moves other than the plan's comm_bytes, or differs from the
unpartitioned run beyond tolerance (test/Runtime/models.test)."""

import json
import os
import subprocess
import sys

tmp = sys.argv[1]
status = 0
for graph in sys.argv[2:]:
    name = os.path.splitext(os.path.basename(graph))[0]
    for k in range(1, 5):
        plan = f"{tmp}.{name}.{k}.plan.json"
        report = f"{tmp}.{name}.{k}.report.json"
        subprocess.run(["tofu-plan", graph, "--workers", str(k), "--quiet",
                        "-o", plan], check=True)
        run = subprocess.run(["tofu-run", plan, "--graph", graph, "--check",
                              "--report", report], capture_output=True,
                             text=True)
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
