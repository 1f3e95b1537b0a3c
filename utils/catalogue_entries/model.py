"""The tofu-export model file of the catalogue: `Entry(name=FAMILY.NAME)`
builds one entry of catalogue_entries (see __init__.py) as a module whose
forward returns the scalar loss of one training step:

  tofu-export utils/catalogue_entries/model.py:Entry \\
      --model-kwargs '{"name": "nn.Conv1d"}' --input 2x4x9
"""

import os
import re
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))

from catalogue_entries import case, nn_losses  # noqa: E402


def _shape(spec):
    """(shape, dtype, given as values) of an --input spec:
    `2x4x9`, `2x5:i64`, `lengths=2:i64=[6,6]`."""
    spec = re.sub(r"^[A-Za-z_][A-Za-z0-9_]*=", "", spec)
    body, has_values, _ = spec.partition("=")
    shape, _, dtype = body.partition(":")
    return [int(d) for d in shape.split("x")], dtype or "f32", \
        bool(has_values)


def _tensors(out):
    """The tensors of a module's output (tuples, lists, dicts, nested)."""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        out = list(out.values())
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    return []


class Entry(nn.Module):
    """One catalogue entry and its loss."""

    def __init__(self, name):
        super().__init__()
        try:
            self.case = case(name)
        except KeyError:
            raise ValueError(f"no catalogue entry '{name}'") from None
        self.model = self.case.build()
        nn_losses._rng.seed(0)  # the same targets in every process
        targets = self.case.targets() if self.case.targets else []
        for i, t in enumerate(targets):
            self.register_buffer(f"target{i}", t)
        self.targets = len(targets)
        # nn entries: each float input is scaled by a trainable parameter
        # of its shape, so the step differentiates the layer by its input
        # (and a layer without parameters still has a gradient to compute)
        self.scales = nn.ParameterList()
        self.scaled = [False] * len(self.case.inputs)
        if name.startswith("nn"):
            self.scaled = []
            for spec in self.case.inputs:
                shape, dtype, constant = _shape(spec)
                self.scaled.append(dtype == "f32" and not constant)
                if self.scaled[-1]:
                    self.scales.append(nn.Parameter(
                        torch.rand(shape) + 0.5))

    def forward(self, *inputs):
        scales = iter(self.scales)
        xs = [x * next(scales) if scaled else x
              for x, scaled in zip(inputs, self.scaled)]
        targets = [getattr(self, f"target{i}") for i in range(self.targets)]
        forward = self.case.forward or (lambda m, *a: m(*a))
        out = forward(self.model, *xs, *targets)
        if self.case.is_loss:
            return out
        floats = [t for t in _tensors(out) if t.is_floating_point()]
        return sum((t * t).mean() for t in floats)
