"""This file implements writing a tofu-graph document (one tensor or op per
line, so that diffs and greps stay readable) and the `--stats` summary."""

import json
import sys
from collections import Counter


# Key order of ops on output; other keys follow in their own order.
OP_KEYS = ("name", "type", "inputs", "outputs", "params", "group", "aten")


def _dumps(obj) -> str:
    return json.dumps(obj, separators=(", ", ": "), allow_nan=False)


def _ordered_op(op: dict) -> dict:
    out = {k: op[k] for k in OP_KEYS if k in op}
    out.update((k, v) for k, v in op.items() if k not in out)
    return out


def write(doc: dict, path) -> None:
    """Write `doc` to `path`, or to stdout when `path` is None or '-'."""
    head = {k: v for k, v in doc.items() if k not in ("tensors", "ops")}
    lines = ["{" + _dumps(head)[1:-1] + ","]
    for key in ("tensors", "ops"):
        items = doc[key] if key == "tensors" else [
            _ordered_op(op) for op in doc[key]]
        lines.append(f' "{key}": [')
        lines.extend("  " + _dumps(x) + ("," if i + 1 < len(items) else "")
                     for i, x in enumerate(items))
        lines.append(" ]" + ("," if key == "tensors" else ""))
    lines.append("}")
    text = "\n".join(lines) + "\n"
    if path is None or path == "-":
        sys.stdout.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)


def _numel(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def summary(doc: dict, stats: dict) -> str:
    """Counts of ops and tensors, parameter count and the times taken."""
    roles = Counter(t["role"] for t in doc["tensors"])
    params = sum(_numel(t["shape"]) for t in doc["tensors"]
                 if t["role"] == "param")
    types = len({op["type"] for op in doc["ops"]})
    return (f"ops: {len(doc['ops'])} ({types} types), "
            f"tensors: {len(doc['tensors'])} "
            f"({', '.join(f'{r} {n}' for r, n in sorted(roles.items()))}), "
            f"parameters: {params}, "
            f"time: import {stats['import_s']:.2f}s, "
            f"build {stats['build_s']:.2f}s, trace {stats['trace_s']:.2f}s, "
            f"convert {stats['convert_s']:.2f}s, total {stats['total_s']:.2f}s"
            + _decomposed(stats))


def _decomposed(stats: dict) -> str:
    """The `--stats` line of the ops decomposed (decompose.py)."""
    if "decomposed" not in stats:
        return ""
    done = stats["decomposed"]
    rounds = stats.get("rounds", 1)
    text = ", ".join(f"{op} x{n}" for op, n in done.items()) or "none"
    return (f"\ndecomposed ({rounds} trace"
            f"{'s' if rounds != 1 else ''}): {text}")
