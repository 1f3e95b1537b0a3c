#!/usr/bin/env python3
"""Random-mutation robustness check of tdlc.

Mutates seed .tdl files (deletes, duplicates, inserts tokens and bytes,
truncates) and runs tdlc on each mutant. Every run must end with exit
status 0 or 1, within the time limit, and without a sanitizer report; the
first mutant that does not is saved and reported.

    fuzz-tdlc.py TDLC SEED.tdl... [--count N] [--seed S] [--save DIR]
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile

TOKENS = ["op", "lambda", "Sum", "Max", "Min", "Prod", "(", ")", "[", "]",
          "<", ">", ",", ":", ";", "=", "+", "-", "*", "/", "%", "!", "&&",
          "||", "==", "0", "1", "-1", "2.5", "1e309", "9" * 25, "i", "k",
          "A", "exp", "select", "#", "\n", " ", "\x00", "\xff", "é"]


def mutate(text: bytes, rng: random.Random) -> bytes:
    data = bytearray(text)
    for _ in range(rng.randint(1, 4)):
        pos = rng.randint(0, len(data))
        choice = rng.randrange(5)
        if choice == 0 and data:  # delete a span
            end = min(len(data), pos + rng.randint(1, 8))
            del data[pos:end]
        elif choice == 1:  # insert a token
            data[pos:pos] = rng.choice(TOKENS).encode("utf-8", "surrogateescape")
        elif choice == 2 and data:  # duplicate a span
            end = min(len(data), pos + rng.randint(1, 40))
            data[pos:pos] = data[pos:end]
        elif choice == 3:  # insert a random byte
            data[pos:pos] = bytes([rng.randrange(256)])
        else:  # truncate
            del data[pos:]
    return bytes(data)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tdlc")
    parser.add_argument("seeds", nargs="+")
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=10.0)
    parser.add_argument("--save", default=None,
                        help="directory to keep a failing mutant in")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    seeds = [open(path, "rb").read() for path in args.seeds]
    statuses = {0: 0, 1: 0}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mutant.tdl")
        for n in range(args.count):
            mutant = mutate(rng.choice(seeds), rng)
            with open(path, "wb") as f:
                f.write(mutant)
            problem = None
            try:
                run = subprocess.run([args.tdlc, path], capture_output=True,
                                     timeout=args.timeout)
                stderr = run.stderr.decode("utf-8", "replace")
                if run.returncode not in statuses:
                    problem = f"exit status {run.returncode}"
                elif "Sanitizer" in stderr or "runtime error" in stderr:
                    problem = "sanitizer report"
                else:
                    statuses[run.returncode] += 1
            except subprocess.TimeoutExpired:
                problem = f"no exit within {args.timeout} s"
            if problem:
                saved = os.path.join(args.save or tmp, f"failing-{n}.tdl")
                if args.save:
                    os.makedirs(args.save, exist_ok=True)
                    with open(saved, "wb") as f:
                        f.write(mutant)
                print(f"FAIL: mutant {n}: {problem}; input {saved if args.save else repr(mutant)}")
                return 1
    print(f"fuzz-tdlc: {args.count} mutants: {statuses[0]} accepted, "
          f"{statuses[1]} rejected with a diagnostic, 0 crashes or hangs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
