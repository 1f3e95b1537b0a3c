"""Checks tofu-plan --peak-memory's joint choice (docs/Planner.md,
"Recomputation"): at a budget the search's plan cannot meet by any
recomputation tried but the plan of another factoring of K can, tofu-plan
keeps that other plan and says what it tried.

- The least peak recomputation reaches is read from tofu-plan's error at a
  budget nothing meets (1K) for each factoring alone (--levels); FIRST
  (the factoring the search picks) must reach higher than OTHER.
- At the budget halfway between, tofu-plan (no --levels) must succeed with
  OTHER's levels, print a note per candidate tried, and record them in
  the plan's "search" object as an approximation of kind peak-memory;
  --levels FIRST alone must fail there.

usage: joint_budget.py TOFU_PLAN GRAPH.json K FIRST OTHER OUT_PLAN.json
Writes the budget in bytes to OUT_PLAN.json.budget.
"""
import json
import sys

from peak_budget import fail, least, plan as run

tofu_plan, graph_path, k, first, other, out_path = sys.argv[1:7]


def plan(budget, *extra, out="/dev/null"):
    return run(tofu_plan, graph_path, k, budget, *extra, out=out)


a = least(tofu_plan, graph_path, k, "--levels", first)
b = least(tofu_plan, graph_path, k, "--levels", other)
if not b < a:
    fail(f"levels {other} reach {b:.0f} bytes, levels {first} {a:.0f}")
budget = int((a + b) / 2)
r = plan(budget, "--levels", first)
if r.returncode != 1:
    fail(f"levels {first} alone at {budget}: rc {r.returncode}")
r = plan(budget, out=out_path)
if r.returncode != 0:
    fail(f"at {budget}: rc {r.returncode}: {r.stderr}")
p = json.load(open(out_path))
levels = "x".join(map(str, p["levels"]))
if levels != other:
    fail(f"kept levels {levels}, not {other}")
if max(p["peak_bytes_per_worker"]) > budget:
    fail("the plan does not fit")
notes = [line for line in r.stderr.splitlines()
         if line.startswith("tofu-plan: note: --peak-memory: tried")]
kinds = [x["kind"] for x in p["search"]["approximations"]]
if "peak-memory" not in kinds:
    fail("no peak-memory approximation in the plan's search object")
open(out_path + ".budget", "w").write(str(budget))
print(f"ok: at {budget} bytes kept levels {levels}, "
      f"{len(p.get('recompute', []))} recomputed, {len(notes)} notes")
for line in notes:
    print(line)
