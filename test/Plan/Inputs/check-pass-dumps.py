"""Checks tofu-plan --print-after=all's dumps of one factoring against the
plans the tool writes: the `search` dump's steps and layouts are the plan
made with --refine=false, the `refine` dump's are the plan's, and the
`lower` dump is the plan itself without what the driver adds afterwards
(its `search` object, `graph` field and, when the dump has none, the
chosen plan's predicted peaks).

usage: check-pass-dumps.py DUMPS PLAN.json UNREFINED_PLAN.json

Prints the dumps' headers in order, then one line per check; exits 1 at
the first mismatch.
"""

import json
import re
import sys

HEADER = re.compile(r"^// -----// After (\w+) \((.*)\) //----- //$")


def read_dumps(path):
    sections = []
    for line in open(path).read().splitlines():
        m = HEADER.match(line)
        if m:
            sections.append((m.group(1), m.group(2), []))
        elif sections:
            sections[-1][2].append(line)
        else:
            sys.exit(f"text before the first dump header: {line!r}")
    return sections


def expected_lines(plan):
    lines = ["levels " + "x".join(str(f) for f in plan["levels"])]
    lines += [f"op '{op['name']}': " + " ".join(op["steps"])
              for op in plan["ops"]]
    lines += [f"tensor '{t['name']}': " + " ".join(t["steps"])
              for t in plan["tensors"]]
    return lines


def compare(what, got, want):
    if got != want:
        for g, w in zip(got + ["<end>"] * len(want), want + ["<end>"] * len(got)):
            if g != w:
                sys.exit(f"{what}: dump has {g!r}, the plan {w!r}")
    print(f"{what}: {len(got)} lines match")


def main():
    dumps, plan_path, unrefined_path = sys.argv[1:4]
    sections = read_dumps(dumps)
    for name, unit, lines in sections:
        print(f"{name} ({unit})")
    plan = json.load(open(plan_path))
    unrefined = json.load(open(unrefined_path))
    by_pass = {name: lines for name, _, lines in sections}
    compare("search = the --refine=false plan", by_pass["search"],
            expected_lines(unrefined))
    compare("refine = the plan", by_pass["refine"], expected_lines(plan))
    changed = sum(a != b for a, b in zip(by_pass["search"], by_pass["refine"]))
    print(f"refine changed {changed} lines of search")
    lowered = json.loads("\n".join(by_pass["lower"]))
    added = ["search", "graph"]
    # The driver predicts peaks for the chosen plan only, after the passes
    # (planner::recordPeaks): a lowered candidate's list is empty.
    if lowered.get("peak_bytes_per_worker") == []:
        added.append("peak_bytes_per_worker")
        del lowered["peak_bytes_per_worker"]
    written = {k: v for k, v in plan.items() if k not in added}
    if lowered != written:
        keys = [k for k in set(lowered) | set(written)
                if lowered.get(k) != written.get(k)]
        sys.exit(f"lower: the dump differs from the plan in {sorted(keys)}")
    print(f"lower = the plan but {', '.join(added)}: comm_bytes "
          f"{lowered['comm_bytes']}")


if __name__ == "__main__":
    main()
