"""This file implements the options that shape a model and its inputs, and
the parsing of `--input` shapes (`8x1024`, `8x20:i64`) and of inputs given
as values (`lengths=2:i64=[5,3]`). Like errors.py it
does not import torch."""

import json
import re
from dataclasses import dataclass, field
from typing import List, Optional

from .errors import UsageError

DTYPE_SPELLINGS = ("f32", "f16", "bf16", "f64", "i64", "i32", "i8", "bool")


@dataclass
class Options:
    """The command-line options that shape a model and its inputs."""

    batch: int = 8
    image: int = 224
    classes: int = 1000
    vocab: int = 10000
    steps: int = 20
    inputs: List["InputSpec"] = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)


@dataclass
class InputSpec:
    """One `--input`: shape, dtype spelling, optional name and values."""

    shape: List[int]
    dtype: str = "f32"
    name: Optional[str] = None
    values: Optional[List] = None  # flattened, row-major: a constant input


_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_GRAMMAR = "[NAME=]DxDx...[:DTYPE][=[V,...]]"


def _flatten(v) -> list:
    return [x for item in v for x in _flatten(item)] \
        if isinstance(v, list) else [v]


def _parse_values(spec: str, text: str, dtype: str, numel: int) -> list:
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError:
        parsed = None
    if not isinstance(parsed, list):
        raise UsageError(f"malformed --input '{spec}': values must be a "
                         "list like [5,3]")
    values = _flatten(parsed)
    if len(values) != numel:
        raise UsageError(f"malformed --input '{spec}': {len(values)} "
                         f"value(s) for a shape of {numel} element(s)")
    for v in values:
        ok = isinstance(v, (int, float)) and not isinstance(v, bool)
        if dtype == "bool":
            ok = isinstance(v, bool) or v in (0, 1)
        elif not dtype.startswith("f"):
            ok = ok and float(v).is_integer()
        if not ok:
            raise UsageError(f"malformed --input '{spec}': value {v!r} is "
                             f"not a {dtype}")
    if dtype == "bool":
        return [bool(v) for v in values]
    return [float(v) if dtype.startswith("f") else int(v) for v in values]


def parse_input(spec: str) -> InputSpec:
    """`8x1024`, `8x20:i64`, `lengths=2:i64=[5,3]` -> an InputSpec."""
    name, rest = None, spec
    m = _NAME.match(spec)
    if m:
        name, rest = m.group(1), m.group(2)
    body, has_values, values_s = rest.partition("=")
    shape_s, _, dtype = body.partition(":")
    try:
        shape = [int(d) for d in shape_s.split("x")]
    except ValueError:
        raise UsageError(f"malformed --input '{spec}': expected "
                         f"{_GRAMMAR}") from None
    if any(d <= 0 for d in shape):
        raise UsageError(f"malformed --input '{spec}': extents must be "
                         "positive")
    dtype = dtype or "f32"
    if dtype not in DTYPE_SPELLINGS:
        raise UsageError(f"malformed --input '{spec}': unknown dtype "
                         f"'{dtype}' (use one of {', '.join(DTYPE_SPELLINGS)})")
    values = None
    if has_values:
        numel = 1
        for d in shape:
            numel *= d
        values = _parse_values(spec, values_s, dtype, numel)
    return InputSpec(shape, dtype, name, values)
