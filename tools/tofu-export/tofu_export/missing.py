"""This file implements the check that every op of an exported step has a
spec in the operator library, by type name (library.py), and the message
for the ops that have none: one line per ATen op, naming its graph type(s),
the module (path and class) and the model's source line of its first call,
and how many calls there are; all of them in one run. Whether an instance's
shapes resolve to an overload is tdlc --coverage's job; this check only
knows names.
"""

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Dict, List

from . import trace


@dataclass
class MissingOp:
    """An ATen op whose graph type(s) have no spec."""

    aten: str  # `aten.sort.default`
    types: List[str] = field(default_factory=list)
    nodes: List = field(default_factory=list)  # FX nodes of its calls


def find(doc: dict, origins: Dict[str, object], library) -> List[MissingOp]:
    """The ATen ops of `doc` whose types the library does not define, in
    the order of their first op in the graph."""
    found: "OrderedDict[str, MissingOp]" = OrderedDict()
    for op in doc["ops"]:
        if library.has(op["type"]):
            continue
        node = origins.get(op["name"])
        target = getattr(node, "target", None)
        aten = f"aten.{op['aten']}" if target is None else str(target)
        entry = found.setdefault(aten, MissingOp(aten))
        if op["type"] not in entry.types:
            entry.types.append(op["type"])
        if node is not None and node not in entry.nodes:
            entry.nodes.append(node)
    return list(found.values())


def where(node, recorder) -> str:
    """Where the model issues an FX node's op: module and source line (for
    a backward op, of the forward call it differentiates)."""
    if node is None:
        return ""
    label = recorder.module_label if recorder is not None else \
        (lambda m: f"'{m or '<top>'}'")
    phase = node.meta.get("tofu_phase")
    prefix = ""
    if phase == trace.BACKWARD:
        fwd = node.meta.get("tofu_bwd_of")
        if fwd is None:
            return " in the backward pass"
        while fwd.op == "call_function" and \
                not hasattr(fwd.target, "_schema") and fwd.args:
            fwd = fwd.args[0]  # getitem of a multi-output call
        prefix, node = f" in the backward of {fwd.target}", fwd
    elif phase == trace.UPDATE:
        return f" in the optimizer update ({node.meta.get('tofu_group')})"
    text = f"{prefix} in module {label(node.meta.get('tofu_module', ''))}"
    line = node.meta.get("tofu_source")
    return text + (f" at {line}" if line else "")


def describe(entry: MissingOp, recorder) -> str:
    """One line: `aten.sort.default (sort__0, sort__1) in module 'a' (A)
    at model.py:12`."""
    node = entry.nodes[0] if entry.nodes else None
    calls = len(entry.nodes)
    more = f" ({calls} calls)" if calls > 1 else ""
    source = node.meta.get("tofu_decomposed_from") if node is not None \
        else None
    via = f", from the decomposition of {source}" if source else ""
    return (f"{entry.aten} (type {', '.join(entry.types)}) has no spec"
            f"{where(node, recorder)}{more}{via}")


def report(missing: List[MissingOp], recorder, library) -> List[str]:
    """The error lines for a step with ops without a spec."""
    lines = [describe(m, recorder) for m in missing]
    lines.append(f"{len(missing)} ATen op(s) of the step have no spec in the "
                 f"operator library ({library.where}); add specs "
                 "(docs/OperatorLibrary.md) or pass --allow-missing-specs "
                 "to write the graph anyway")
    return lines
