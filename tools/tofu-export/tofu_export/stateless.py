"""This file implements `functional_call`: run a module with the given
tensors in place of its parameters and buffers. It is
`torch.nn.utils.stateless.functional_call` plus what PyTorch 1.13 misses:
recurrent modules (nn.RNN, nn.LSTM, nn.GRU) read their weights from the
list `_flat_weights`, which the stateless call does not swap (pytorch issue
90500), so their weights would be traced as constants that get no gradient.
Here each such list is pointed at the given tensors for the call.
"""

import contextlib
from typing import Dict

import torch
from torch.nn.utils import stateless


@contextlib.contextmanager
def _flat_weights(model: torch.nn.Module, tensors: Dict[str, torch.Tensor]):
    saved = []
    for prefix, mod in model.named_modules():
        if not isinstance(mod, torch.nn.RNNBase):
            continue
        dot = f"{prefix}." if prefix else ""
        saved.append((mod, mod._flat_weights))
        mod._flat_weights = [tensors.get(dot + n, w) for n, w in
                             zip(mod._flat_weights_names, mod._flat_weights)]
    try:
        yield
    finally:
        for mod, weights in saved:
            mod._flat_weights = weights


def functional_call(model: torch.nn.Module, tensors: Dict[str, torch.Tensor],
                    args: tuple):
    """`model(*args)` with `tensors` (by qualified name) as its parameters
    and buffers."""
    with _flat_weights(model, tensors):
        return stateless.functional_call(model, tensors, args)
