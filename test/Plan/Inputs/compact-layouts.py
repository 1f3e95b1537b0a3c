"""Checks and rewrites the compact layouts of a plan (docs/PlanFormat.md,
"Compact layouts") with its own derivation of regions from costmodel.md's
rules, independent of the C++ one.

usage: compact-layouts.py check PLAN GRAPH
           every tensor has "steps"; where it also lists "workers", they are
           the regions its steps derive; prints how many tensors list them
       compact-layouts.py expand PLAN GRAPH OUT
           OUT: PLAN with every tensor's "workers" derived from its steps and
           the steps removed
       compact-layouts.py strip PLAN OUT
           OUT: PLAN with the "workers" of every tensor removed
"""

import json
import sys


def part(lo, hi, f, c):
    q, r = divmod(hi - lo, f)
    return [lo + c * q + min(c, r), lo + (c + 1) * q + min(c + 1, r)]


def region(shape, levels, steps, w):
    digits = []
    for f in reversed(levels):
        digits.append(w % f)
        w //= f
    digits.reverse()
    box = [[0, n] for n in shape]
    for f, c, step in zip(levels, digits, steps):
        if step != "replicate":
            d = int(step.split(":")[1])
            box[d] = part(box[d][0], box[d][1], f, c)
    return box


def volume(box):
    v = 1
    for lo, hi in box:
        v *= max(hi - lo, 0)
    return v


def main():
    mode = sys.argv[1]
    plan = json.load(open(sys.argv[2]))
    if mode == "strip":
        for t in plan["tensors"]:
            t.pop("workers", None)
        json.dump(plan, open(sys.argv[3], "w"))
        return
    shapes = {t["name"]: t["shape"]
              for t in json.load(open(sys.argv[3]))["tensors"]}
    k, levels = plan["workers"], plan["levels"]
    listed = 0
    for t in plan["tensors"]:
        steps = t["steps"]
        assert len(steps) == len(levels), t
        derived = [region(shapes[t["name"]], levels, steps, w)
                   for w in range(k)]
        if mode == "expand":
            t["workers"] = [{"region": r} for r in derived]
            del t["steps"]
        elif "workers" in t:
            listed += 1
            for w, (entry, r) in enumerate(zip(t["workers"], derived)):
                got = entry["region"]
                same = (volume(got) == volume(r) == 0 if got is None or
                        volume(got) == 0 else got == r)
                assert same, (t["name"], w, got, r)
    if mode == "expand":
        json.dump(plan, open(sys.argv[4], "w"))
    else:
        print(f"{len(plan['tensors'])} tensors with steps, "
              f"{listed} listing workers")


if __name__ == "__main__":
    main()
