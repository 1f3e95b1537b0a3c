"""Runs tofu-run ARGS... --steps STEPS --report REPORT and checks the
report's step_seconds: positive, and (with more than one step) at most the
mean of the steps after the first, which all ran within the process's wall
time (test/Runtime/step-seconds.test).

usage: check_step_seconds.py REPORT STEPS tofu-run ARGS...
"""

import json
import subprocess
import sys
import time

report, steps, command = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
start = time.time()
subprocess.run(command + ["--steps", str(steps), "--report", report],
               check=True, stdout=subprocess.DEVNULL)
wall = time.time() - start
seconds = json.load(open(report))["step_seconds"]
assert seconds > 0, seconds
print(f"steps {steps}: step_seconds > 0")
if steps > 1:
    bound = wall / (steps - 1)
    assert seconds <= bound, (seconds, bound)
    print(f"steps {steps}: step_seconds <= wall time / {steps - 1}")
