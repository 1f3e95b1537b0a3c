"""This file implements the lowering of ATen ops that have no spec in the
operator library into ops that do, through PyTorch's own decompositions
(`torch._decomp.decomposition_table`, PyTorch 1.13).

The rule (docs/Export.md, "Decompositions"): an op whose graph type has a
spec is always kept whole (a spec partitions and runs as one kernel; its
decomposition would be several ops, each partitioned and materialized); an
op whose type has no spec is decomposed if PyTorch has a decomposition for
it. The choice is made by tracing: the step is traced, the ops without a
spec are looked up in the table, and the step is traced again with those
decompositions active (make_fx applies them below autograd, so a forward
op and its backward op are decomposed separately, each where it has no
spec). A decomposition whose result still has an op without a spec and
without a decomposition of its own (for instance one written with
`prims` ops) is withdrawn, so that the error names the op the model used.
"""

from collections import Counter
from typing import Dict, List

from .errors import UsageError
from .scopes import ACTIVE

# Rounds of trace-and-decompose before giving up (each round decomposes all
# ops found without a spec; nested decompositions need one round per level).
MAX_ROUNDS = 6


def _table():
    from torch._decomp import decomposition_table
    return decomposition_table


class Decomposer:
    """The decompositions to apply while tracing, chosen round by round."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.table: Dict = {}  # OpOverload -> counting wrapper
        self.counts: Counter = Counter()  # 'aten.op.overload' -> calls
        self.withdrawn = set()  # OpOverloads whose decomposition failed
        self.rounds = 0

    def _wrap(self, op, fn):
        """`fn` counted, its ops tagged with `op` and named in a scope of
        the op's name (`block.mish.exp`)."""
        name = str(op)

        def run(*args, **kwargs):
            self.counts[name] += 1
            recorder = ACTIVE[-1] if ACTIVE else None
            if recorder is None:
                return fn(*args, **kwargs)
            recorder.lowering.append(name)
            try:
                with recorder.scope(op.overloadpacket.__name__):
                    return fn(*args, **kwargs)
            finally:
                recorder.lowering.pop()
        return run

    def force(self, names: List[str]) -> None:
        """Decompose these ATen ops (`packet` or `packet.overload`) even
        where they have a spec (--decompose, for measurements)."""
        table = _table()
        for name in names:
            packet, _, overload = name.partition(".")
            ops = [op for op in table
                   if op.overloadpacket.__name__ == packet and
                   (not overload or op._overloadname == overload)]
            if not ops:
                raise UsageError(f"--decompose {name}: PyTorch has no "
                                 "decomposition of that ATen op")
            for op in ops:
                self.table[op] = self._wrap(op, table[op])

    def start_trace(self) -> None:
        self.counts = Counter()

    def update(self, missing_nodes: List) -> bool:
        """Given the FX nodes of the ops without a spec in the last trace,
        decide the next round's table; True if the step must be traced
        again."""
        if not self.enabled or self.rounds >= MAX_ROUNDS or not missing_nodes:
            return False
        table = _table()
        added, withdraw = set(), set()
        for node in missing_nodes:
            op = node.target
            if op in table and op not in self.table and \
                    op not in self.withdrawn:
                added.add(op)
                continue
            source = node.meta.get("tofu_decomposed_from")
            if source is not None:
                withdraw.add(source)
        for op in list(self.table):
            if str(op) in withdraw:
                del self.table[op]
                self.withdrawn.add(op)
        if withdraw:
            self.rounds += 1
            return True  # retrace without them before adding others
        for op in added:
            self.table[op] = self._wrap(op, table[op])
        self.rounds += bool(added)
        return bool(added)

    def decomposed(self) -> Dict[str, int]:
        """Calls decomposed in the last trace, by ATen op."""
        return {op: n for op, n in sorted(self.counts.items())}

