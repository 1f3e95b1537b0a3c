"""Compares a plan made under --peak-memory BUDGET with the plan made
without it (same graph, same K): the partitioning is the same, the plan
without recomputation peaks above the budget, the one with it at most at
the budget, and recomputation only adds bytes (held and moved).

usage: recompute_check.py PLAIN.json RECOMPUTE.json BUDGET_BYTES
"""
import json
import sys

plain = json.load(open(sys.argv[1]))
rc = json.load(open(sys.argv[2]))
budget = int(sys.argv[3])


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


names = rc.get("recompute", [])
if not names:
    fail("nothing recomputed")
if plain["ops"] != rc["ops"] or plain["tensors"] != rc["tensors"]:
    fail("the partitioning differs")
if max(plain["peak_bytes_per_worker"]) <= budget:
    fail("the plan without recomputation already fits")
if max(rc["peak_bytes_per_worker"]) > budget:
    fail("the plan that recomputes does not fit")
if rc["comm_bytes"] < plain["comm_bytes"]:
    fail("recomputation moved fewer bytes")
for a, b in zip(plain["resident_bytes_per_worker"],
                rc["resident_bytes_per_worker"]):
    if b <= a:
        fail("recomputation did not add resident bytes (the copies)")
print(f"ok: {len(names)} recomputed, peak {max(plain['peak_bytes_per_worker'])}"
      f" -> {max(rc['peak_bytes_per_worker'])} <= {budget}")
