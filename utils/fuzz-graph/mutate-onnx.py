#!/usr/bin/python3
"""Random-mutation fuzzing of tofu-graph's ONNX importer.

usage: mutate-onnx.py SEED_DIR TOFU_GRAPH SECONDS [RANDOM_SEED]

Takes the .onnx files in SEED_DIR (test/Graph/Inputs/make_onnx.py writes a
set), applies 1-8 random byte edits (overwrite, delete a span, insert
bytes, truncate) to one of them, runs TOFU_GRAPH (an ASan+UBSan build:
-DTOFU_ENABLE_SANITIZERS=ON) on the result, and repeats for SECONDS. Any
exit status other than 0 or 1, or a sanitizer report, is a failure; the
input is kept as crashN.onnx in the working directory. Prints the count of
inputs, failures and exit statuses; exits 1 on a failure.
"""

import os
import random
import subprocess
import sys
import tempfile
import time


def mutate(rng, data):
    for _ in range(rng.randint(1, 8)):
        if not data:
            break
        i = rng.randrange(len(data))
        kind = rng.randrange(4)
        if kind == 0:
            data[i] = rng.randrange(256)
        elif kind == 1:
            del data[i:i + rng.randint(1, 16)]
        elif kind == 2:
            data[i:i] = bytes(rng.randrange(256)
                              for _ in range(rng.randint(1, 8)))
        else:
            del data[i:]
    return data


def main():
    seed_dir, tool, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 7)
    seeds = [open(os.path.join(seed_dir, f), "rb").read()
             for f in sorted(os.listdir(seed_dir)) if f.endswith(".onnx")]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0",
               UBSAN_OPTIONS="halt_on_error=1")
    path = os.path.join(tempfile.mkdtemp(), "input.onnx")
    end = time.time() + seconds
    inputs, failures, statuses = 0, 0, {}
    while time.time() < end:
        data = mutate(rng, bytearray(rng.choice(seeds)))
        with open(path, "wb") as f:
            f.write(data)
        p = subprocess.run([tool, path], capture_output=True, env=env,
                           timeout=60)
        inputs += 1
        statuses[p.returncode] = statuses.get(p.returncode, 0) + 1
        err = p.stderr.decode(errors="replace")
        if p.returncode not in (0, 1) or "Sanitizer" in err or \
                "runtime error" in err:
            failures += 1
            with open(f"crash{failures}.onnx", "wb") as f:
                f.write(data)
            print(f"failure {failures}: exit {p.returncode}\n{err[-800:]}",
                  flush=True)
    print(f"{inputs} inputs, {failures} failures, exit statuses {statuses}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
