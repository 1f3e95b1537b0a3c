#!/usr/bin/env python3
"""Where a step's receive waits went, from tofu-run --trace files.

Usage: wait-trace.py TRACE.json [TRACE.json.1 ...] [--top N]

Reads the spans tofu-run --trace wrote (one file, or one per MPI rank; the
ranks' clocks are one machine's steady clock) and prints, per worker, its
kernel, wait and step seconds; the wait per phase; and where the waits'
time went, split by what the sender did from the moment the wait began
until it sent the message:
  peer computing     in kernels (the sender was behind: load imbalance,
                     or its core was taken)
  peer waiting       itself waiting for another message
  peer moving        packing, copying, sending other pieces
  after the send     the message was sent and not yet taken (delivery: the
                     transport, or the receiver not getting its core back)
The ops with the most wait follow. docs/Runtime.md, "Where the waits are".
"""
import argparse
import collections
import json
import sys


def load(files):
    workers, ops, events = None, None, []
    for f in files:
        try:
            with open(f) as fh:
                doc = json.load(fh)
        except (OSError, ValueError) as e:
            sys.exit(f"wait-trace.py: cannot read '{f}': {e}")
        if not isinstance(doc, dict) or "events" not in doc:
            sys.exit(f"wait-trace.py: '{f}' is not a tofu-run --trace file")
        if workers is not None and (doc["workers"] != workers or doc["ops"] != ops):
            sys.exit(f"wait-trace.py: '{f}' traces another plan than '{files[0]}'")
        workers, ops = doc["workers"], doc["ops"]
        events += doc["events"]
    return workers, ops, events


def overlap(spans, lo, hi):
    """Seconds of each kind of `spans` (sorted by start) inside [lo, hi)."""
    out = collections.Counter()
    for e in spans:
        if e["start"] >= hi:
            break
        t = min(e["end"], hi) - max(e["start"], lo)
        if t > 0:
            out[e["kind"]] += t
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    workers, ops, events = load(args.files)
    by_worker = collections.defaultdict(list)
    for e in events:
        by_worker[e["worker"]].append(e)
    for spans in by_worker.values():
        spans.sort(key=lambda e: e["start"])
    busy = {w: [e for e in spans if e["kind"] in ("kernel", "wait")]
            for w, spans in by_worker.items()}
    sends = {(e["worker"], e["peer"], e["op"], e["phase"]): e
             for e in events if e["kind"] == "send"}
    missing = sorted(set(range(workers)) - set(by_worker))
    if missing:
        print(f"note: no spans of workers {missing} (pass every rank's file)")

    print("worker  kernel_s  wait_s  step_s  wait/step")
    for w in sorted(by_worker):
        spans = by_worker[w]
        kernel = sum(e["end"] - e["start"] for e in spans if e["kind"] == "kernel")
        wait = sum(e["end"] - e["start"] for e in spans if e["kind"] == "wait")
        step = spans[-1]["end"] - spans[0]["start"]
        print(f"{w:6}  {kernel:8.4f}  {wait:6.4f}  {step:6.4f}  {wait / step:8.1%}")

    causes = collections.Counter()
    phases = collections.Counter()
    per_op = collections.Counter()
    for e in events:
        if e["kind"] != "wait":
            continue
        took = e["end"] - e["start"]
        phases[e["phase"]] += took
        per_op[(e["op"], e["phase"])] += took
        send = sends.get((e["peer"], e["worker"], e["op"], e["phase"]))
        if e["peer"] not in busy or not send:
            causes["sender not traced"] += took
            continue
        sent = min(max(send["start"], e["start"]), e["end"])
        causes["after the send"] += e["end"] - sent
        doing = overlap(busy[e["peer"]], e["start"], sent)
        causes["peer computing"] += doing["kernel"]
        causes["peer waiting"] += doing["wait"]
        causes["peer moving"] += (sent - e["start"]) - doing["kernel"] - doing["wait"]
    total = sum(causes.values())
    print(f"\nwait by phase (all workers, {total:.4f} s):")
    for phase, s in phases.most_common():
        print(f"  {phase:10} {s:8.4f} s  {s / total if total else 0:6.1%}")
    print("wait by what the sender did meanwhile:")
    for cause, s in causes.most_common():
        print(f"  {cause:18} {s:8.4f} s  {s / total if total else 0:6.1%}")
    print(f"ops with the most wait (top {args.top}):")
    for (op, phase), s in per_op.most_common(args.top):
        name = ops[op] if op < len(ops) else "next step"
        print(f"  {s:8.4f} s  op {op} {name} ({phase})")


if __name__ == "__main__":
    main()
