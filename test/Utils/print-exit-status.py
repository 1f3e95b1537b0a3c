"""Runs a command and prints its exit status as `exit: N`, so lit tests can
check the exact status (lit's internal shell has no `$?`). The command's
own stdout and stderr pass through."""
import subprocess
import sys

status = subprocess.call(sys.argv[1:])
print(f"exit: {status}", flush=True)
