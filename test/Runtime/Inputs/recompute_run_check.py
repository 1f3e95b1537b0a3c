"""Checks a tofu-run --report of a plan that recomputes: every worker's
measured peak is the plan's and at most BUDGET bytes, and the bytes moved
are the plan's comm_bytes.

usage: recompute_run_check.py REPORT.json BUDGET_BYTES|@FILE
(@FILE: the budget is read from FILE)
"""
import json
import sys

report = json.load(open(sys.argv[1]))
budget = sys.argv[2]
budget = int(open(budget[1:]).read() if budget.startswith("@") else budget)
measured = report["peak_bytes_per_worker"]
planned = report["plan_peak_bytes_per_worker"]
ok = True
if measured != planned:
    print(f"FAIL: measured peaks {measured}, the plan's {planned}")
    ok = False
if max(measured) > budget:
    print(f"FAIL: measured peak {max(measured)} above the budget {budget}")
    ok = False
if report["moved_bytes"] != report["comm_bytes"]:
    print(f"FAIL: moved {report['moved_bytes']}, comm_bytes "
          f"{report['comm_bytes']}")
    ok = False
if ok:
    print(f"ok: K={report['workers']} peak {max(measured)} <= {budget}, "
          f"moved {report['moved_bytes']}")
sys.exit(0 if ok else 1)
