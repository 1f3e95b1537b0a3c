"""Removes tensors without elements from a tofu-graph.

Models make tensors with a zero extent where a part is absent: Emformer
without left context or memory slices `x[T:T]` and concatenates it, passes
`torch.empty(0)` as "no memory" to a `cat` (which skips an empty 1-d
tensor), and builds its attention mask from `zeros(n, 0)` blocks. Such a
tensor holds nothing, and an op over it computes nothing; TDL operators are
defined over positive extents. This pass rewrites the graph so that no op
reads or writes one:

  1. An op whose output has no element is dropped (unless the output is a
     step output).
  2. `cat_nK` leaves out its empty inputs and becomes `cat_n<K-j>`; with one
     input left, its readers read that input instead (it stays a `cat_n1`
     when its output is a step output).
  3. `slice_backward` of an empty gradient is zeros of its input's shape:
     `full<value=0>`.
  4. Tensors without elements that nothing reads any more (the outputs of
     dropped ops, graph inputs) are dropped, except parameters and step
     outputs.

Any other op that reads an empty tensor stays as it is, with the ops that
compute that tensor (tofu-graph reports it). Ops keep their names, groups
and `aten`, except the zeros of 3 (`zeros.default`).
"""

import math
import re
from typing import Dict

_MARKS = ("grad_of", "updates")


def _is_step_output(t) -> bool:
    return t["role"] == "output" or any(m in t for m in _MARKS)


def _is_cat(op) -> bool:
    return re.fullmatch(r"cat_n\d+", op["type"]) is not None


def _still_read(doc, tensors, empty) -> set:
    """Empty tensors that ops this pass does not rewrite read (or that are
    step outputs), and the empty tensors those are computed from."""
    producer = {op["outputs"][0]: op for op in doc["ops"]}
    work = [n for n in empty if _is_step_output(tensors[n])]
    for op in doc["ops"]:
        if op["outputs"][0] not in empty and not _is_cat(op) and \
                op["type"] != "slice_backward":
            work.extend(i for i in op["inputs"] if i in empty)
    kept = set()
    while work:
        name = work.pop()
        if name not in kept:
            kept.add(name)
            op = producer.get(name)
            work.extend(i for i in (op or {}).get("inputs", [])
                        if i in empty)
    return kept


def drop_empty_tensors(doc: dict) -> dict:
    """Rewrites `doc` (a tofu-graph object) in place; returns it."""
    tensors: Dict[str, dict] = {t["name"]: t for t in doc["tensors"]}
    empty = {n for n, t in tensors.items() if math.prod(t["shape"]) == 0}
    if not empty:
        return doc
    still_read = _still_read(doc, tensors, empty)
    alias: Dict[str, str] = {}
    kept = []
    for op in doc["ops"]:
        op["inputs"] = [alias.get(i, i) for i in op["inputs"]]
        out = op["outputs"][0]
        if out in empty and out not in still_read:
            continue
        if _is_cat(op) and out not in empty:
            op["inputs"] = [i for i in op["inputs"] if i not in empty]
            op["type"] = f"cat_n{len(op['inputs'])}"
            if len(op["inputs"]) == 1 and not _is_step_output(tensors[out]):
                alias[out] = op["inputs"][0]
                continue
        elif op["type"] == "slice_backward" and op["inputs"][0] in empty:
            op.update(type="full", inputs=[], params={"value": 0.0},
                      aten="zeros.default")
        kept.append(op)
    doc["ops"] = kept
    produced = {op["outputs"][0] for op in kept}
    read = {i for op in kept for i in op["inputs"]}
    doc["tensors"] = [
        t for t in doc["tensors"]
        if t["name"] in produced or t["name"] in read or
        _is_step_output(t) or t["role"] == "param" or
        (t["name"] not in empty and t["name"] not in alias)]
    return doc
