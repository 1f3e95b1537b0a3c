"""Prints 'same plan' when two plan JSON files are equal except for the
search record's approximation messages (a skipped solve fixes no decisions
greedily, so the count of those differs); otherwise the first difference."""
import json
import sys


def load(path):
    with open(path) as f:
        plan = json.load(f)
    for approximation in plan.get("search", {}).get("approximations", []):
        if approximation["kind"] == "greedy-decisions":
            approximation["message"] = ""
    return plan


a, b = load(sys.argv[1]), load(sys.argv[2])
for key in sorted(set(a) | set(b)):
    if a.get(key) != b.get(key):
        print("plans differ in", key)
        sys.exit(1)
print("same plan")
