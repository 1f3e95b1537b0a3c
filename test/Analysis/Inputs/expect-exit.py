# Runs a command and fails unless it exits with the given status; the
# command's stdout and stderr are passed through on stdout for FileCheck.
# Usage: expect-exit.py STATUS COMMAND ARGS...
import subprocess
import sys

want = int(sys.argv[1])
proc = subprocess.run(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
sys.stdout.buffer.write(proc.stdout)
if proc.returncode != want:
    print("expect-exit: exit status %d, expected %d" % (proc.returncode, want))
    sys.exit(1)
