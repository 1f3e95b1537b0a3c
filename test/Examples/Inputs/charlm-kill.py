#!/usr/bin/python3
"""Sends a signal to one rank of a running `mpirun -np K charlm-train
--transport mpi` job and reports how the job ended (test/Examples/
charlm-faults.test).

    charlm-kill.py --mpirun "mpirun --oversubscribe" --np K --rank R
                   --signal KILL|STOP --after STEPS --limit SECONDS
                   --dir DIR -- charlm-train ARGS...

Each rank writes its process id to DIR/pid.RANK before it execs the
program (so the id is charlm-train's); rank 0 writes the losses to
DIR/losses.txt. Once the job has run STEPS steps, rank R gets the signal;
the script then waits for mpirun and prints its exit status, whether it
ended within SECONDS of the signal, and the job's output. A job that is
still running SECONDS + 30 s after the signal is killed (its process
group) and reported as a hang. A stopped rank left over is killed (by its
process id). Exit status 1 if the job did not end within SECONDS or exited
0, else 0.
"""

import argparse
import os
import shlex
import signal
import subprocess
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--signal", choices=["KILL", "STOP"], required=True)
    parser.add_argument("--after", type=int, default=2)
    parser.add_argument("--limit", type=float, default=30)
    parser.add_argument("--dir", required=True)
    parser.add_argument("program", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    os.makedirs(args.dir, exist_ok=True)
    losses = os.path.join(args.dir, "losses.txt")
    for name in os.listdir(args.dir):
        os.remove(os.path.join(args.dir, name))
    wrapper = ('echo $$ > "%s/pid.$OMPI_COMM_WORLD_RANK"; exec "$@"'
               % args.dir)
    command = shlex.split(args.mpirun) + [
        "-np", str(args.np), "sh", "-c", wrapper, "sh"] + program + [
        "--losses", losses]
    log = open(os.path.join(args.dir, "output.txt"), "w+")
    job = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                           start_new_session=True)
    pid_file = os.path.join(args.dir, f"pid.{args.rank}")
    deadline = time.monotonic() + 120
    while True:
        steps = 0
        if os.path.exists(losses):
            with open(losses) as f:
                steps = sum(1 for line in f if line.endswith("\n"))
        if steps >= args.after and os.path.exists(pid_file):
            break
        if job.poll() is not None or time.monotonic() > deadline:
            log.seek(0)
            sys.stdout.write(log.read())
            print(f"the job did not reach step {args.after} "
                  f"(exit {job.poll()})")
            if job.poll() is None:
                os.killpg(job.pid, signal.SIGKILL)
            return 1
        time.sleep(0.05)
    with open(pid_file) as f:
        victim = int(f.read())
    os.kill(victim, getattr(signal, "SIG" + args.signal))
    sent = time.monotonic()
    print(f"sent SIG{args.signal} to rank {args.rank} after {steps} steps")
    try:
        status = job.wait(timeout=args.limit + 30)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait()
        status = None
    took = time.monotonic() - sent
    # A stopped rank mpirun left behind (its id, if still charlm-train's).
    try:
        with open(f"/proc/{victim}/cmdline", "rb") as f:
            if b"charlm-train" in f.read():
                os.kill(victim, signal.SIGKILL)
    except (FileNotFoundError, ProcessLookupError):
        pass
    log.seek(0)
    sys.stdout.write(log.read())
    within = status is not None and took <= args.limit
    print(f"mpirun exit: {'hang' if status is None else status}")
    print(f"ended within {args.limit:g} s: {'yes' if within else 'NO'} "
          f"({took:.1f} s)")
    return 0 if within and status != 0 else 1


if __name__ == "__main__":
    sys.exit(main())
