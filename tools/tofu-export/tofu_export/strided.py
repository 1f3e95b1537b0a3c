"""This file implements the reading of `as_strided` and `as_strided_scatter`
calls as the layout-free ops they amount to, where they amount to one.
Autograd's backward of an in-place update of a view (`CopySlices`), its
functionalization and some composite kernels (adaptive average pooling on a
channels-last input re-strides its output) issue them with sizes and
strides of the tensors' memory layout. Two cases are logical ops:

  identity  `as_strided(x, x.shape, s, o)` where `s` are x's own strides
            (on dimensions of extent > 1) and `o` its storage offset;
  reshape   `as_strided(x, size, s, o)` of a contiguous x (offset 0) with
            contiguous strides `s` for `size`, `o` = 0 and as many elements:
            `view(x, size)`; likewise `as_strided_scatter(self, src, size,
            s, o)` that overwrites all of a contiguous `self`:
            `view(src, self.shape)`.

Everything else stays `as_strided` (a layout-dependent op). Strides come
from the FX nodes' `tensor_meta`, storage offsets from `tofu_offset`
(recorded by the tracer's dispatch mode).
"""

import math
from typing import List, Optional, Tuple


def _meta(node):
    return getattr(node, "meta", {}).get("tensor_meta")


def _contiguous(shape: List[int]) -> List[int]:
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return strides[::-1]


def _same(shape, a, b) -> bool:
    """Equal strides on every dimension of extent > 1."""
    return len(a) == len(b) == len(shape) and all(
        x == y for d, x, y in zip(shape, a, b) if d != 1)


def _layout(node) -> Optional[Tuple[List[int], List[int], int]]:
    """(shape, strides, storage offset) of an FX node, if recorded."""
    meta = _meta(node)
    offset = getattr(node, "meta", {}).get("tofu_offset")
    if meta is None or offset is None or not hasattr(meta, "stride"):
        return None
    return [int(d) for d in meta.shape], [int(s) for s in meta.stride], \
        int(offset)


def _is_dense(layout) -> bool:
    shape, strides, offset = layout
    return offset == 0 and _same(shape, strides, _contiguous(shape))


def logical_form(packet: str, args) -> Optional[Tuple]:
    """("alias", x) or ("view", x, size) for an as_strided(_scatter) call
    that is one, else None."""
    if packet == "as_strided" and len(args) >= 3:
        x, size, stride = args[0], list(args[1]), list(args[2])
        offset = args[3] if len(args) > 3 else None
        layout = _layout(x)
        if layout is None:
            return None
        shape, strides, x_offset = layout
        if offset is None:
            offset = x_offset
        if size == shape and offset == x_offset and \
                _same(shape, stride, strides):
            return ("alias", x)
        if _is_dense(layout) and offset == 0 and \
                math.prod(size) == math.prod(shape) and \
                _same(size, stride, _contiguous(size)):
            return ("view", x, size)
        return None
    if packet == "as_strided_scatter" and len(args) >= 4:
        base, src, size, stride = args[0], args[1], list(args[2]), \
            list(args[3])
        offset = args[4] if len(args) > 4 else None
        layout = _layout(base)
        if layout is None or not _is_dense(layout):
            return None
        shape = layout[0]
        if offset in (None, 0) and math.prod(size) == math.prod(shape) and \
                _same(size, stride, _contiguous(size)):
            return ("view", src, shape)
    return None
