"""tofu-export: capture a PyTorch training step as a tofu-graph.

User models may call `tofu_export.scope(name)` to name groups of ops (for
example unrolled time steps); outside tofu-export it does nothing.
"""

from .scopes import scope  # noqa: F401
