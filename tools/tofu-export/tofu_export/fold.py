"""Folds matrix transposes into the matrix products that read them.

PyTorch's autograd writes nn.Linear and its gradients with `aten.t`
around `mm`/`addmm`: `x @ t(W)` forward, `t(t(W))` and `t(mm(t(g), x))`
backward. Eagerly these transposes are free views; in a tofu-graph each is
an op with its own output, which the runtime materializes and the planner
partitions. This pass rewrites the graph so that none is left where a
matrix product can read the operand transposed in place:

  1. `t(t(x))` is `x`: readers of the outer transpose read `x` (and a step
     output mark on it moves to `x` when `x` is an intermediate tensor).
  2. `mm(a, b)` and `addmm(bias, a, b)` (with a bias row, nn.Linear's)
     reading `t(y)` read `y` instead, as `mm_transposed<ta, tb>` and
     `addmm_transposed<beta, alpha, ta, tb>` (specs/linalg.tdl) with the
     flag of that operand set.
  3. Transposes nothing reads any more are dropped.

The products keep their names, outputs and groups; the folded ops keep
`aten` (the product they compute on transposed operands).
"""

from typing import Dict

# The step-output marks _assign_output_roles puts on a tensor.
_MARKS = ("grad_of", "updates")

_FOLDED_TYPE = {"mm": "mm_transposed", "addmm": "addmm_transposed"}


def _is_matrix_transpose(op, rank) -> bool:
    return op["type"] == "t" and rank[op["inputs"][0]] == 2


def _is_step_output(t) -> bool:
    return t["role"] == "output" or any(m in t for m in _MARKS)


def _can_take_marks(t) -> bool:
    return t["role"] in ("activation", "grad") and not _is_step_output(t)


def fold_transposes(doc: dict) -> dict:
    """Rewrites `doc` (a tofu-graph object) in place; returns it."""
    tensors: Dict[str, dict] = {t["name"]: t for t in doc["tensors"]}
    rank = {name: len(t["shape"]) for name, t in tensors.items()}
    transposed_from: Dict[str, str] = {}  # output of a matrix `t` -> input
    alias: Dict[str, str] = {}  # a tensor equal to another one
    for op in doc["ops"]:
        op["inputs"] = [alias.get(i, i) for i in op["inputs"]]
        if _is_matrix_transpose(op, rank):
            _fold_double_transpose(op, tensors, transposed_from, alias)
        elif op["type"] in _FOLDED_TYPE:
            _read_operands_transposed(op, tensors, transposed_from)
    _drop_unread_transposes(doc, tensors)
    return doc


def _fold_double_transpose(op, tensors, transposed_from, alias) -> None:
    src, out = op["inputs"][0], op["outputs"][0]
    inner = transposed_from.get(src)
    if inner is None:
        transposed_from[out] = src
        return
    target = tensors[out]
    if _is_step_output(target):
        if not _can_take_marks(tensors[inner]):
            transposed_from[out] = src  # keep it: `inner` is an input
            return
        for key in ("role",) + _MARKS:
            if key in target:
                tensors[inner][key] = target.pop(key)
        target["role"] = "grad"
    alias[out] = inner


def _read_operands_transposed(op, tensors, transposed_from) -> None:
    first = 1 if op["type"] == "addmm" else 0  # addmm's bias comes first
    if op["type"] == "addmm" and tensors[op["inputs"][0]]["shape"] != \
            tensors[op["outputs"][0]]["shape"][1:]:
        return  # only nn.Linear's bias row has a transposed variant
    flags = []
    for i in range(first, first + 2):
        src = transposed_from.get(op["inputs"][i])
        flags.append(0 if src is None else 1)
        if src is not None:
            op["inputs"][i] = src
    if any(flags):
        op["type"] = _FOLDED_TYPE[op["type"]]
        op["params"] = dict(op.get("params", {}), ta=flags[0], tb=flags[1])


def _drop_unread_transposes(doc, tensors) -> None:
    """Transposes (and chains of them) whose output nothing reads and
    that are no step output."""
    while True:
        read = {i for op in doc["ops"] for i in op["inputs"]}
        dead = {op["outputs"][0] for op in doc["ops"]
                if op["type"] == "t" and op["outputs"][0] not in read
                and not _is_step_output(tensors[op["outputs"][0]])}
        if not dead:
            return
        doc["ops"] = [op for op in doc["ops"] if op["outputs"][0] not in dead]
        doc["tensors"] = [t for t in doc["tensors"] if t["name"] not in dead]
