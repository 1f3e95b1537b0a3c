"""This file implements the conversion of a traced training step (an FX
graph of ATen calls over meta tensors) into a tofu-graph document: dead code
is removed, aliases are elided, multi-output calls become one op per used
output, every tensor gets a unique readable name, a dtype, a shape and a
role, and every op gets a group (forward ops their own name, backward ops
the forward call they differentiate, update ops `update.<param>`).
Integer results computed from inputs given as values (values.py marks their
nodes `tofu_value`) are constants of the step, with their values, instead
of ops.
"""

import operator
from typing import Any, Dict, List, Optional

import torch
import torch.utils._pytree as pytree

from . import naming, trace
from .step import Captured

DTYPES = {
    torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
    torch.float64: "f64", torch.int64: "i64", torch.int32: "i32",
    torch.int8: "i8", torch.bool: "bool",
}


class ExportError(Exception):
    """The step cannot be written as a tofu-graph."""


class _Names:
    """Hands out unique names: `base`, then `base.1`, `base.2`, ..."""

    def __init__(self):
        self.used = set()
        self.next = {}

    def take(self, base: str) -> str:
        name, k = base, self.next.get(base, 0)
        if k:
            name = f"{base}.{k}"
        while name in self.used:
            k += 1
            name = f"{base}.{k}"
        self.next[base] = k + 1
        self.used.add(name)
        return name

    def reserve(self, name: str) -> None:
        if name in self.used:
            raise ExportError(f"duplicate tensor name '{name}'")
        self.used.add(name)


def _is_getitem(node) -> bool:
    return node.op == "call_function" and node.target is operator.getitem


def _live_nodes(graph) -> set:
    """Nodes the step's outputs depend on (dead code: in-place updates of
    buffers, unused factory results, detached copies)."""
    out = next(n for n in graph.nodes if n.op == "output")
    live, work = set(), [out]
    while work:
        n = work.pop()
        if n in live:
            continue
        live.add(n)
        work.extend(n.all_input_nodes)
    return live


class GraphBuilder:
    """Turns a `Captured` step into the tofu-graph JSON object."""

    def __init__(self, captured: Captured):
        self.cap = captured
        self.fx = captured.graph.graph
        self.names = _Names()
        self.tensor_of: Dict[Any, str] = {}  # FX node -> tensor name
        self.tensors: List[dict] = []
        self.tensor_index: Dict[str, dict] = {}
        self.ops: List[dict] = []
        self.call_name: Dict[Any, str] = {}  # forward FX call -> group name
        self.alias_source: Dict[Any, Any] = {}  # elided FX call -> its input
        self.origin: Dict[str, Any] = {}  # op name -> FX call it came from
        self.folded = set()  # constants folded from given values

    def build(self) -> dict:
        live = _live_nodes(self.fx)
        self._add_inputs(live)
        for node in self.fx.nodes:
            if node in live and node.op == "call_function" and \
                    not _is_getitem(node):
                self._add_call(node, live)
        self._assign_output_roles()
        self._drop_dead_ops()
        self._assign_accumulation_groups()
        self._drop_unread_inputs()
        return {"format": "tofu-graph", "version": 1,
                "tensors": self.tensors, "ops": self.ops}

    # Graph inputs ------------------------------------------------------
    def _add_inputs(self, live) -> None:
        phs = [n for n in self.fx.nodes if n.op == "placeholder"]
        assert len(phs) == len(self.cap.inputs)
        for node, gi in zip(phs, self.cap.inputs):
            self.names.reserve(gi.name)
            t = self._add_tensor(node, gi.name, gi.role)
            if gi.value is not None:
                t["value"] = gi.value  # an input given as values
        for node in self.fx.nodes:
            if node.op == "get_attr" and node in live:
                # A tensor constant of the step (e.g. `torch.tensor(2.0)`).
                value = getattr(self.cap.graph, node.target)
                node.meta.setdefault("tensor_meta", value)
                t = self._add_tensor(
                    node, self.names.take(f"const.{node.target}"), "state")
                if value.numel() <= 64 and not value.is_meta:
                    # small and known: record the values
                    t["value"] = value.flatten().tolist()

    def _add_tensor(self, node, name, role) -> dict:
        meta = node.meta.get("tensor_meta")  # has .shape and .dtype
        if meta is None:
            raise ExportError(f"no shape recorded for '{node.name}'")
        dtype = DTYPES.get(meta.dtype)
        if meta.dtype == torch.uint8 and "tofu_value" in node.meta:
            # The format has no u8. A u8 constant (a `.byte()` mask sized
            # by lengths given as values: Tacotron2) is written as i32,
            # which holds every u8 value; its readers compute the same
            # values from it (docs/Export.md, "Inputs given as values").
            dtype = "i32"
        if dtype is None:
            raise ExportError(f"tensor '{name}' has unsupported dtype "
                              f"{meta.dtype}")
        t = {"name": name, "shape": [int(d) for d in meta.shape],
             "dtype": dtype, "role": role}
        self.tensors.append(t)
        self.tensor_index[name] = t
        self.tensor_of[node] = name
        return t

    # Calls --------------------------------------------------------------
    def _add_call(self, node, live) -> None:
        try:
            call = naming.canonicalize(node.target, node.args, node.kwargs)
        except naming.NamingError as e:
            raise ExportError(f"{node.format_node()}: {e}") from None
        if call.alias:
            self.tensor_of[node] = self._input_name(call.tensors[0][1])
            self.alias_source[node] = call.tensors[0][1]
            return
        outputs = self._outputs(node, call, live)
        cname = self._call_name(node, call)
        for k, out_node in outputs:
            self._add_op(node, call, k, out_node, cname)

    def _outputs(self, node, call, live):
        if call.num_outputs == 1 and not _returns_list(node):
            return [(0, node)]
        outs = [(u.args[1], u) for u in node.users
                if _is_getitem(u) and u in live]
        return sorted(outs, key=lambda x: x[0])

    def _call_name(self, node, call) -> str:
        phase = node.meta.get("tofu_phase")
        if phase == trace.BACKWARD:
            fwd = self._forward_call(node.meta.get("tofu_bwd_of"))
            if fwd is not None:
                return self.names.take(f"{self.call_name[fwd]}.bwd.{call.base}")
            return self.names.take(f"backward.{call.base}")
        if phase == trace.UPDATE:
            return self.names.take(f"{node.meta['tofu_group']}.{call.base}")
        scope = node.meta.get("tofu_scope") or ""
        name = self.names.take(f"{scope}.{call.base}" if scope else call.base)
        self.call_name[node] = name
        return name

    def _forward_call(self, node) -> Optional[Any]:
        """The forward call an autograd node's FX node belongs to; for an
        elided call (an alias), the call that produced its input."""
        while node is not None:
            if _is_getitem(node):
                node = node.args[0]
            elif node in self.alias_source:
                node = self.alias_source[node]
            else:
                break
        return node if node in self.call_name else None

    def _add_op(self, node, call, k, out_node, cname) -> None:
        multi = call.num_outputs != 1 or _returns_list(node)
        name = f"{cname}__{k}" if multi else cname
        self.names.reserve(name) if multi else None
        op_type = f"{call.base}__{k}" if multi else call.base
        value = out_node.meta.get("tofu_value")
        if value is not None:  # computed from inputs given as values
            t = self._add_tensor(out_node, name, "state")
            t["value"] = value.flatten().tolist()
            self.folded.add(name)
            return
        params = dict(call.params)
        inputs = [self._input_name(n) for n in call.output_inputs(k)]
        phase = node.meta.get("tofu_phase")
        role = {trace.FORWARD: "activation", trace.BACKWARD: "grad",
                trace.UPDATE: "activation"}[phase]
        self._add_tensor(out_node, name, role)
        op = {"name": name, "type": op_type, "inputs": inputs,
              "outputs": [name], "params": params}
        group = self._group(node, cname)
        if group is not None:
            op["group"] = group
        op["aten"] = call.aten
        self.ops.append(op)
        self.origin[name] = node

    def _group(self, node, cname) -> Optional[str]:
        phase = node.meta.get("tofu_phase")
        if phase == trace.FORWARD:
            return cname
        if phase == trace.UPDATE:
            return node.meta["tofu_group"]
        fwd = self._forward_call(node.meta.get("tofu_bwd_of"))
        return None if fwd is None else self.call_name[fwd]

    def _input_name(self, n) -> str:
        if n not in self.tensor_of:
            raise ExportError(f"'{n.name}' is used before it is produced")
        return self.tensor_of[n]

    # Roles and groups that need the whole graph --------------------------
    def _assign_output_roles(self) -> None:
        out = next(n for n in self.fx.nodes if n.op == "output")
        flat = pytree.tree_flatten(out.args[0])[0]
        cap = self.cap
        loss, rest = flat[0], flat[1:]
        grads = rest[:len(cap.grads)]
        new_p = rest[len(cap.grads):len(cap.grads) + len(cap.new_params)]
        new_s = rest[len(cap.grads) + len(cap.new_params):]
        self._mark(loss, "output", {})
        for n, p in zip(grads, cap.grads):
            self._mark(n, "grad", {"grad_of": p})
        for n, p in zip(new_p, cap.new_params):
            self._mark(n, "output", {"updates": p})
        for n, s in zip(new_s, cap.new_state):
            self._mark(n, "output", {"updates": s})

    def _mark(self, node, role, extra) -> None:
        t = self.tensor_index[self._input_name(node)]
        if t["role"] in ("input", "param", "state"):
            raise ExportError(f"step output '{t['name']}' is a graph input")
        t["role"] = role
        t.update(extra)

    def _drop_dead_ops(self) -> None:
        """Ops whose output nothing reads and that produce no step output
        (e.g. a `full` whose only reader was a random fill that ignores its
        input's values)."""
        needed = {t["name"] for t in self.tensors
                  if t["role"] == "output" or "grad_of" in t}
        kept = []
        for op in reversed(self.ops):
            if op["outputs"][0] in needed:
                kept.append(op)
                needed.update(op["inputs"])
        dead = {op["outputs"][0] for op in self.ops} - \
            {op["outputs"][0] for op in kept}
        self.ops = kept[::-1]
        self.tensors = [t for t in self.tensors if t["name"] not in dead]

    def _drop_unread_inputs(self) -> None:
        """Buffers, parameters and optimizer state no op reads are not part
        of the dataflow: batch norm's running statistics (the kernel updates
        them as a side effect), parameters the loss does not depend on,
        given values and constants folded from them that only folded
        constants read."""
        read = {i for op in self.ops for i in op["inputs"]}
        droppable = {gi.name for gi in self.cap.inputs
                     if gi.kind in ("buffer", "param", "optimizer",
                                    "constant")} | self.folded
        self.tensors = [t for t in self.tensors
                        if t["name"] in read or t["name"] not in droppable]

    def _assign_accumulation_groups(self) -> None:
        """Backward ops issued outside any autograd node (gradient sums and
        the loss seed) join the group of the op that consumes them."""
        consumers: Dict[str, List[dict]] = {}
        for op in self.ops:
            for i in op["inputs"]:
                consumers.setdefault(i, []).append(op)
        orphans = [op for op in self.ops if "group" not in op]
        for op in reversed(orphans):
            for user in consumers.get(op["outputs"][0], []):
                if "group" in user:
                    op["group"] = user["group"]
                    break
        renamed = {}
        for op in orphans:
            if "group" in op:
                kind = "seed" if op["type"] == "full" else "gradsum"
                renamed[op["name"]] = self.names.take(
                    f"{op['group']}.{kind}.{op['type']}")
        self._rename(renamed)

    def _rename(self, renamed: Dict[str, str]) -> None:
        """Rename ops (and their output tensors) everywhere."""
        if not renamed:
            return
        for op in self.ops:
            op["inputs"] = [renamed.get(i, i) for i in op["inputs"]]
            if op["name"] in renamed:
                self.origin[renamed[op["name"]]] = self.origin.pop(op["name"])
                op["name"] = renamed[op["name"]]
                op["outputs"] = [op["name"]]
        for t in self.tensors:
            t["name"] = renamed.get(t["name"], t["name"])


def _returns_list(node) -> bool:
    rets = node.target._schema.returns
    return len(rets) == 1 and isinstance(rets[0].type, torch.ListType)


def build_graph(captured: Captured) -> dict:
    """The tofu-graph JSON object of a captured step."""
    return GraphBuilder(captured).build()


def build_graph_with_origins(captured: Captured):
    """The graph and, for each op name, the FX node of the ATen call it
    came from (for messages about ops: module, source line)."""
    builder = GraphBuilder(captured)
    doc = builder.build()
    return doc, builder.origin
