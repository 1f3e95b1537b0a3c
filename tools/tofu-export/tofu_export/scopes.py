"""This file implements `tofu_export.scope`, the one hook that models may
call: it names the ops issued inside it (for example unrolled time steps)
while tofu-export traces, and does nothing otherwise. It does not import
torch."""

import contextlib
from typing import List

# The recorders of the traces in progress (innermost last).
ACTIVE: List = []


@contextlib.contextmanager
def scope(name: str):
    """Name the ops issued inside `name`: they are named
    `<module>.<name>.<type>`. Does nothing outside tofu-export."""
    if not ACTIVE:
        yield
        return
    with ACTIVE[-1].scope(name):
        yield
