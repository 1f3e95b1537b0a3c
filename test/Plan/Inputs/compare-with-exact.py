"""Plans each graph with the default (recursive) search and with
--search=exact for several worker counts, checks both plans with
tofu-plan --verify, and prints the ratio of their comm_bytes. Fails if the
default search is not the optimum at K = 2, or more than MAX_RATIO above it
at other K. Where the exact search cannot solve every factoring (it fails
and says which), the optimum over one K-way level (--levels K) stands in
for it, and the line says so.

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


def main():
    tool, max_ratio, graphs = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for graph in graphs:
            for k in (2, 3, 4, 6, 8):
                out = os.path.join(tmp, "plan.json")
                recursive, _ = plan(tool, graph, k, "recursive", out)
                exact, note = exact_plan(tool, graph, k, out)
                ratio = recursive / exact if exact else 1.0
                # Below the optimum is impossible unless the exact search
                # was restricted to fewer factorings.
                bad = (recursive < exact and not note) or \
                    (k == 2 and recursive != exact) or ratio > max_ratio
                failed |= bad
                print(f"{os.path.basename(graph)} K={k}: recursive {recursive}"
                      f" exact {exact} ratio {ratio:.3f}"
                      f"{'  FAIL' if bad else ''}{'  (' + note + ')' if note else ''}")
    print("FAILED" if failed else "all within bounds")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
