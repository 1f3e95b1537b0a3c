"""Finds a --peak-memory budget at which recomputing single ops cannot fit
a graph's plan but recomputing chains can (docs/Planner.md,
"Recomputation"), and writes the plan tofu-plan makes at that budget.

- With a budget nothing meets (1K), tofu-plan fails and says the least
  peak it reached: once recomputing single ops only
  (--recompute-chains=false), once with chains (the default). The second
  must be lower.
- The budget is halfway between: tofu-plan with single ops must fail there
  (exit 1) and with chains must succeed; the plan must list a chain member
  (an activation that no backward op reads, found here from the graph) and
  peak at most at the budget.

usage: chain_budget.py TOFU_PLAN GRAPH.json K OUT_PLAN.json
Writes the budget in bytes to OUT_PLAN.json.budget.
"""
import json
import sys

from peak_budget import fail, least, plan as run

tofu_plan, graph_path, k, out_path = sys.argv[1:5]


def plan(budget, chains, out="/dev/null"):
    return run(tofu_plan, graph_path, k, budget,
               "--recompute-chains=" + chains, out=out)


single = least(tofu_plan, graph_path, k, "--recompute-chains=false")
chained = least(tofu_plan, graph_path, k)
if not chained < single:
    fail(f"chains reach {chained:.0f} bytes, single ops {single:.0f}")
budget = int((single + chained) / 2)
r = plan(budget, "false")
if r.returncode != 1 or "no plan found" not in r.stderr:
    fail(f"single ops at {budget}: rc {r.returncode}: {r.stderr}")
r = plan(budget, "true", out_path)
if r.returncode != 0:
    fail(f"chains at {budget}: rc {r.returncode}: {r.stderr}")
p = json.load(open(out_path))
g = json.load(open(graph_path))
role = {t["name"]: t["role"] for t in g["tensors"]}
backward = next(i for i, op in enumerate(g["ops"])
                if role[op["outputs"][0]] == "grad")
read_backward = {x for op in g["ops"][backward:] for x in op["inputs"]}
listed = p.get("recompute", [])
members = [t for t in listed if t not in read_backward]
if not members:
    fail("the plan lists no chain member")
if max(p["peak_bytes_per_worker"]) > budget:
    fail(f"the plan peaks at {max(p['peak_bytes_per_worker'])} > {budget}")
open(out_path + ".budget", "w").write(str(budget))
print(f"ok: single ops reach {single / 2**20:.2f} MiB, chains "
      f"{chained / 2**20:.2f} MiB; at {budget} bytes single ops do not fit, "
      f"chains do: {len(listed)} listed, {len(members)} chain members, "
      f"peak {max(p['peak_bytes_per_worker'])}")
