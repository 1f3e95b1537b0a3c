"""Plans each graph with the default (recursive) search and with
--search=exact for several worker counts, checks both plans with
tofu-plan --verify, and prints the ratio of their comm_bytes. Fails if the
default search is not the optimum at K = 2, or more than MAX_RATIO above it
at other K, except where the exact optimum's memory is unbalanced (its
fullest worker above 1.10x an even share or its mean peak, by
balance-check.py) and the default plan's is not: the default search leaves
out splits that give some workers empty parts (docs/Planner.md, "Balanced
memory"), trading bytes for balance, and the line says so. Where the exact
search cannot solve every factoring (it fails and says which), the optimum
over one K-way level (--levels K) stands in for it, and the line says so.

usage: compare-with-exact.py TOFU_PLAN MAX_RATIO GRAPH...
"""

import json
import os
import subprocess
import sys
import tempfile


def plan(tool, graph, k, search, out, extra=()):
    """The plan's comm_bytes and "search" object, after --verify; None if
    tofu-plan failed (its error is in the exception)."""
    run = subprocess.run([tool, graph, "--workers", str(k), "--search",
                          search, "--quiet", "-o", out, *extra],
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(run.stderr.strip())
    subprocess.run([tool, "--verify", out, graph], check=True,
                   stdout=subprocess.DEVNULL)
    with open(out) as f:
        p = json.load(f)
    return p["comm_bytes"], p["search"]


def exact_plan(tool, graph, k, out):
    """The exact optimum's comm_bytes, and '' or what it was restricted to
    (the whole search failed: the K-way level alone)."""
    try:
        bytes, search = plan(tool, graph, k, "exact", out)
        assert search["exact"] and not search["approximations"], search
        return bytes, ""
    except RuntimeError as e:
        if "cannot solve levels" not in str(e):
            raise
        bytes, search = plan(tool, graph, k, "exact", out,
                             ("--levels", str(k)))
        assert search["exact"] and search["factorings"] == [[k]], search
        too_large = str(e).split("cannot solve levels ")[1].split()[0]
        return bytes, f"exact over levels {k} only: {too_large} too large"


BALANCE_CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "balance-check.py")


def balanced(plan_path, graph):
    """Whether the plan's memory is balanced within 1.10x, and how."""
    run = subprocess.run([sys.executable, BALANCE_CHECK, plan_path, graph,
                          "--max-ratio", "1.10"], capture_output=True,
                         text=True)
    first = run.stdout.splitlines()[0] if run.stdout else run.stderr.strip()
    return run.returncode == 0, first.split(", ")[-1]


def main():
    tool, max_ratio, graphs = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for graph in graphs:
            for k in (2, 3, 4, 6, 8):
                out = os.path.join(tmp, "plan.json")
                exact_out = os.path.join(tmp, "exact.json")
                recursive, _ = plan(tool, graph, k, "recursive", out)
                exact, note = exact_plan(tool, graph, k, exact_out)
                ratio = recursive / exact if exact else 1.0
                if ratio > max_ratio:
                    exact_ok, exact_how = balanced(exact_out, graph)
                    ok, how = balanced(out, graph)
                    if ok and not exact_ok:
                        note = (f"exact optimum unbalanced: {exact_how}; "
                                f"this plan {how}")
                # Below the optimum is impossible unless the exact search
                # was restricted to fewer factorings.
                bad = (recursive < exact and not note) or \
                    (k == 2 and recursive != exact) or \
                    (ratio > max_ratio and "unbalanced" not in note)
                failed |= bad
                print(f"{os.path.basename(graph)} K={k}: recursive {recursive}"
                      f" exact {exact} ratio {ratio:.3f}"
                      f"{'  FAIL' if bad else ''}{'  (' + note + ')' if note else ''}")
    print("FAILED" if failed else "all within bounds")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
