"""Plans a graph for one topology with a slow outer link and for the same
shape with every link equally fast, and checks what --topology promises:
the slow link carries fewer bytes than it does in the uniform plan, the
slow plan's bandwidth time on the slow machine is no worse than the
uniform plan's, and each plan's level_bytes sum to its comm_bytes.

usage: topology-check.py TOFU_PLAN GRAPH SHAPE SLOW_BWS FAST_BWS
"""

import json
import os
import subprocess
import sys
import tempfile


def plan(tool, graph, shape, bws, out):
    workers = 1
    for f in shape.split("x"):
        workers *= int(f)
    subprocess.run([tool, graph, "--workers", str(workers), "--quiet",
                    "--topology", shape + ":" + bws, "-o", out], check=True)
    subprocess.run([tool, "--verify", out, graph], check=True,
                   stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def bandwidth_seconds(p, bws):
    """Seconds on links of `bws` (GB/s), ignoring latency, of a plan whose
    levels nest in the topology one to one."""
    return sum(b / p["workers"] / (bw * 1e9)
               for b, bw in zip(p["level_bytes"], bws))


def main():
    tool, graph, shape, slow, fast = sys.argv[1:6]
    slow_bws = [float(x) for x in slow.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "plan.json")
        s = plan(tool, graph, shape, slow, out)
        u = plan(tool, graph, shape, fast, out)
    for name, p in (("slow", s), ("uniform", u)):
        total = sum(p["level_bytes"])
        print("%s: levels %s level_bytes %s sum %s comm_bytes %d" %
              (name, p["levels"], p["level_bytes"],
               "==" if total == p["comm_bytes"] else "!=", p["comm_bytes"]))
    print("slow link: %d bytes in the slow plan, %d in the uniform: %s" %
          (s["level_bytes"][0], u["level_bytes"][0],
           "fewer" if s["level_bytes"][0] < u["level_bytes"][0] else "NOT fewer"))
    ts, tu = bandwidth_seconds(s, slow_bws), bandwidth_seconds(u, slow_bws)
    print("on the slow machine: %s" % ("no slower" if ts <= tu else "SLOWER"))


if __name__ == "__main__":
    main()
