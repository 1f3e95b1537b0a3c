#!/usr/bin/env python3
"""Random-mutation robustness check of a JSON reader.

Mutates seed JSON documents (a value replaced by an odd one: wrong types,
huge and negative numbers, 2^64, deep nesting; a member dropped or its key
duplicated; bytes flipped, spans deleted, the text cut short) and runs a
command on each mutant, `{}` in it standing for the mutant's path. Every
run must exit 0, 1 or 2 within the time limit and without a sanitizer
report; the first that does not is reported (and kept with --save), and
the script exits 1. scripts/fuzz.sh runs it on machine files (`machine`).

    fuzz-json.py SEED.json... (--count N | --seconds S) [--seed S]
                 [--timeout T] [--save DIR] -- COMMAND... {}
"""

import argparse
import copy
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ODD_VALUES = [None, True, False, "", "x", -1, 0, 1, 2, 2**31, 2**63 - 1,
              2**63, 2**64, -2**63 - 1, 1.5, -0.0, 1e308, -1e308, [], {},
              [[]], [0] * 70, {"k": {"k": {}}}]


def nested(depth):
    return "[" * depth + "]" * depth


def odd_value(rng):
    # A copy: a shared list or object could end up inside itself.
    return copy.deepcopy(rng.choice(ODD_VALUES))


def mutate_tree(doc, rng):
    """One value of `doc` replaced, or one member dropped."""
    paths = []

    def walk(value, parent, key):
        paths.append((parent, key))
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, value, k)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, value, i)

    walk(doc, None, None)
    parent, key = rng.choice(paths[1:] or paths)
    if parent is None:
        return odd_value(rng)
    if isinstance(parent, dict) and rng.randrange(3) == 0:
        del parent[key]
    else:
        parent[key] = odd_value(rng)
    return doc


def mutate_text(text, rng):
    """Edits of the text a tree mutation cannot make."""
    choice = rng.randrange(6)
    pos = rng.randint(0, len(text))
    if choice == 0:  # a duplicate key
        i = text.find('"', pos)
        j = text.find('":', i + 1) if i >= 0 else -1
        if j > 0:
            member = text[i:j + 2] + " 1, "
            return text[:i] + member + text[i:]
    if choice == 1:  # nesting past any limit
        return text[:pos] + nested(rng.choice([65, 1000, 100000])) + text[pos:]
    if choice == 2:  # a span deleted
        return text[:pos] + text[pos + rng.randint(1, 16):]
    if choice == 3:  # cut short
        return text[:pos]
    if choice == 4:  # a number past 64 bits
        return text[:pos] + rng.choice(["18446744073709551616", "-1e999",
                                        "1e999", "0.0000001"]) + text[pos:]
    data = bytearray(text.encode("utf-8", "surrogateescape"))
    if data:  # a byte flipped
        data[rng.randrange(len(data))] = rng.randrange(256)
    return data.decode("utf-8", "surrogateescape")


def make_mutant(seed, rng):
    doc = json.loads(json.dumps(seed))
    for _ in range(rng.randint(1, 3)):
        doc = mutate_tree(doc, rng)
    text = json.dumps(doc)
    if rng.randrange(3) == 0:
        text = mutate_text(text, rng)
    return text.encode("utf-8", "surrogateescape")


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("fuzz-json.py: give the command after --")
    split = argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("seeds", nargs="+")
    parser.add_argument("--count", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--save", default=None)
    args = parser.parse_args(argv[:split])
    command = argv[split + 1:]
    if "{}" not in command:
        sys.exit("fuzz-json.py: the command must name the mutant as {}")
    seeds = [json.load(open(path)) for path in args.seeds]
    rng = random.Random(args.seed)
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "exitcode=86:detect_leaks=0")
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:exitcode=87")
    end = time.time() + args.seconds if args.seconds is not None else None
    runs, statuses = 0, {}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "mutant.json")
        while (end is None and runs < (args.count or 100)) or \
                (end is not None and time.time() < end):
            with open(path, "wb") as f:
                f.write(make_mutant(rng.choice(seeds), rng))
            cmd = [path if a == "{}" else a for a in command]
            runs += 1
            try:
                done = subprocess.run(cmd, capture_output=True, env=env,
                                      timeout=args.timeout)
                status = done.returncode
                err = done.stderr.decode("utf-8", "replace")
                problem = None
                if "Sanitizer" in err or "runtime error:" in err:
                    problem = "sanitizer report"
                elif status not in (0, 1, 2):
                    problem = f"exit status {status}"
            except subprocess.TimeoutExpired:
                status, err = None, ""
                problem = f"no exit within {args.timeout} s"
            if problem:
                if args.save:
                    os.makedirs(args.save, exist_ok=True)
                    shutil.copy(path, os.path.join(args.save, "mutant.json"))
                tail = "".join("\n  | " + line
                               for line in err.strip().splitlines()[-12:])
                print(f"FAIL: mutant {runs}: {problem}\n  command: "
                      f"{' '.join(cmd)}{tail}")
                return 1
            statuses[status] = statuses.get(status, 0) + 1
    counts = ", ".join(f"{n} exit {s}" for s, n in sorted(statuses.items()))
    print(f"fuzz-json: {runs} mutants ({counts}), 0 crashes, sanitizer "
          f"reports or hangs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
