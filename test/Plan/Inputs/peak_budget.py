"""What chain_budget.py and joint_budget.py share: running tofu-plan with a
--peak-memory budget and reading the least peak recomputation reached from
its error at a budget nothing meets."""
import re
import subprocess
import sys

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def plan(tofu_plan, graph, k, budget, *extra, out="/dev/null"):
    """tofu-plan GRAPH --workers K --peak-memory BUDGET EXTRA... -o OUT."""
    return subprocess.run(
        [tofu_plan, graph, "--workers", str(k), "--quiet", "--peak-memory",
         str(budget), "-o", out, *extra], capture_output=True, text=True)


def least(tofu_plan, graph, k, *extra):
    """The least peak in bytes tofu-plan reached at a 1K budget (its exit 1
    error), to the printed precision."""
    r = plan(tofu_plan, graph, k, "1K", *extra)
    m = re.search(r"at least ([0-9.]+) (B|KiB|MiB|GiB) recomputing", r.stderr)
    if r.returncode != 1 or not m:
        fail(f"expected no plan within 1K: rc {r.returncode}: {r.stderr}")
    return float(m.group(1)) * UNITS[m.group(2)]
