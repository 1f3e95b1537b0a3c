"""This file implements the options that shape a model and its inputs, and
the parsing of `--input` shapes (`8x1024`, `8x20:i64`). Like errors.py it
does not import torch."""

from dataclasses import dataclass, field
from typing import List, Tuple

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
    inputs: List[Tuple[List[int], str]] = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)


def parse_input(spec: str) -> Tuple[List[int], str]:
    """`8x1024` or `8x20:i64` -> (shape, dtype spelling)."""
    shape_s, _, dtype = spec.partition(":")
    try:
        shape = [int(d) for d in shape_s.split("x")]
    except ValueError:
        raise UsageError(f"malformed --input '{spec}': expected "
                         "DxDx...[:DTYPE]") from None
    if any(d <= 0 for d in shape):
        raise UsageError(f"malformed --input '{spec}': extents must be "
                         "positive")
    dtype = dtype or "f32"
    if dtype not in DTYPE_SPELLINGS:
        raise UsageError(f"malformed --input '{spec}': unknown dtype "
                         f"'{dtype}' (use one of {', '.join(DTYPE_SPELLINGS)})")
    return shape, dtype
