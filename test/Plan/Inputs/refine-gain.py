"""Plans a graph with and without refinement and prints the two
comm_bytes and whether refinement kept its promise: never worse, and
(with --expect-gain) strictly better. Both plans must pass --verify.

usage: refine-gain.py TOFU_PLAN GRAPH K [--expect-gain]
"""

import json
import os
import subprocess
import sys
import tempfile


def plan(tool, graph, k, refine, out):
    subprocess.run([tool, graph, "--workers", k, "--quiet", "-o", out,
                    "--refine=" + refine], check=True)
    subprocess.run([tool, "--verify", out, graph], check=True,
                   stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)["comm_bytes"]


def main():
    tool, graph, k = sys.argv[1:4]
    expect_gain = "--expect-gain" in sys.argv[4:]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "plan.json")
        refined = plan(tool, graph, k, "true", out)
        alone = plan(tool, graph, k, "false", out)
    ok = refined < alone if expect_gain else refined <= alone
    print("%s K=%s: refined %d, recursion alone %d: %s" %
          (os.path.basename(graph), k, refined, alone, "OK" if ok else "BAD"))


if __name__ == "__main__":
    main()
