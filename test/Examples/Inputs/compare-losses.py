#!/usr/bin/python3
"""Compares the loss files of charlm-train and reference.py (`STEP LOSS`
per line; docs/Linking.md, "The charlm example").

    compare-losses.py A B [--tolerance T | --exact] [--from STEP]
    compare-losses.py A --falls

With B: A and B must hold the same steps (from --from on, where given) with
|a - b| <= T * (1 + |b|) at every step (T = 1e-4 by default), or, with
--exact, the same text. With --falls: the mean loss of A's last three steps
is under 0.8 times the mean of its first three. Prints one line with the
largest difference or the two means; exit status 1 if the check fails.
"""

import argparse
import sys


def read(path, first):
    steps = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if len(fields) != 2:
                sys.exit(f"{path}:{number}: expected 'STEP LOSS', got {line!r}")
            step, loss = int(fields[0]), fields[1]
            if step >= first:
                steps.append((step, loss))
    if not steps:
        sys.exit(f"{path}: no steps" + (f" from {first}" if first > 1 else ""))
    return steps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b", nargs="?")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--exact", action="store_true")
    parser.add_argument("--from", dest="first", type=int, default=1)
    parser.add_argument("--falls", action="store_true")
    args = parser.parse_args()
    a = read(args.a, args.first)
    if args.falls:
        losses = [float(loss) for _, loss in a]
        if len(losses) < 6:
            sys.exit(f"{args.a}: {len(losses)} steps, --falls needs 6")
        start, end = sum(losses[:3]) / 3, sum(losses[-3:]) / 3
        ok = end < 0.8 * start
        print(f"loss falls: {'yes' if ok else 'NO'} (steps {a[0][0]}-"
              f"{a[2][0]} {start:.4f}, steps {a[-3][0]}-{a[-1][0]} {end:.4f})")
        return 0 if ok else 1
    if args.b is None:
        parser.error("give two loss files, or one with --falls")
    b = read(args.b, args.first)
    if [s for s, _ in a] != [s for s, _ in b]:
        print(f"steps differ: {args.a} has {a[0][0]}-{a[-1][0]} "
              f"({len(a)}), {args.b} {b[0][0]}-{b[-1][0]} ({len(b)})")
        return 1
    if args.exact:
        differ = [s for (s, x), (_, y) in zip(a, b) if x != y]
        print(f"{len(a)} steps {a[0][0]}-{a[-1][0]}: " +
              (f"bit for bit" if not differ else
               f"DIFFER at {len(differ)} steps, first {differ[0]}"))
        return 0 if not differ else 1
    worst, worst_step, ok = 0.0, a[0][0], True
    for (step, x), (_, y) in zip(a, b):
        x, y = float(x), float(y)
        diff = abs(x - y)
        if diff > worst:
            worst, worst_step = diff, step
        ok &= diff <= args.tolerance * (1 + abs(y))
    print(f"{len(a)} steps {a[0][0]}-{a[-1][0]}: largest difference "
          f"{worst:.3g} (step {worst_step}), tolerance {args.tolerance:g} x "
          f"(1 + |loss|): {'within' if ok else 'BEYOND'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
