"""Lowerings (lowerings.py's mechanism: above autograd, so the backward is
that of the lowered form) of packing a padded batch of sequences into ops
the library has specs for:

- `torch._pack_padded_sequence(input, lengths, batch_first)`, which
  nn.utils.rnn.pack_padded_sequence calls (Tacotron2's encoder): the
  packed data is every time step's first `batch_sizes[t]` rows, time
  major, and `batch_sizes[t]` is the number of lengths above t. ATen's
  kernel and its backward (select_scatter per time step) follow the
  lengths' values; ATen requires them on the CPU, so they are known at
  trace time (an input given as values, `--input lengths=2:i64=[5,3]`, and
  `.cpu()` of it). The lowering slices each run of time steps with the same
  batch size, `x[t0:t1, :b]` of the time-major input, flattens it to
  `(t1 - t0) * b` rows and concatenates the runs (one run, a reshape, when
  every sequence has the full length); `batch_sizes` holds the numbers,
  as ATen returns them. The values are ATen's, in ATen's order.
- `torch._pad_packed_sequence(data, batch_sizes, batch_first,
  padding_value, total_length)` (nn.utils.rnn.pad_packed_sequence), the
  inverse: ATen copies each run of time steps into a slice of a padded
  output in place, and with unequal lengths autograd reads those slices
  back with `as_strided`, which has no spec. The lowering reshapes each
  run of `data` to [steps, b, *], pads it to the batch with
  `padding_value` (a `full` and a `cat`), concatenates the runs and the
  steps up to `total_length`, and transposes for batch_first; the lengths
  it returns are a CPU tensor, as ATen's.
"""

import torch
from torch.utils._mode_utils import no_dispatch


def _pack_padded_sequence(input, lengths, batch_first=False):
    if not isinstance(input, torch.Tensor) or \
            not isinstance(lengths, torch.Tensor) or lengths.is_meta or \
            lengths.dim() != 1 or input.dim() < 2:
        return NotImplemented
    lens = [int(n) for n in lengths.tolist()]
    x = input.transpose(0, 1) if batch_first else input  # [T, B, *]
    if not lens or len(lens) != x.shape[1] or lens[-1] <= 0 or \
            lens[0] > x.shape[0] or \
            any(a < b for a, b in zip(lens, lens[1:])):
        return NotImplemented  # ATen's own error for unsorted lengths
    steps = lens[0]
    sizes = [sum(1 for n in lens if n > t) for t in range(steps)]
    runs, t0 = [], 0
    for t in range(1, steps + 1):
        if t == steps or sizes[t] != sizes[t0]:
            run = x[t0:t, :sizes[t0]]
            runs.append(run.reshape(-1, *x.shape[2:]))
            t0 = t
    data = runs[0] if len(runs) == 1 else torch.cat(runs)
    # a CPU tensor made outside the trace, like the one ATen's kernel makes
    # (a traced `torch.tensor` would be a `lift_fresh` of a constant, which
    # functionalization cannot replay)
    with no_dispatch():
        batch_sizes = torch.tensor(sizes, dtype=torch.int64)
    return data, batch_sizes


def _pad_packed_sequence(data, batch_sizes, batch_first=False,
                         padding_value=0.0, total_length=0):
    if not isinstance(data, torch.Tensor) or \
            not isinstance(batch_sizes, torch.Tensor) or \
            batch_sizes.is_meta or batch_sizes.dim() != 1 or data.dim() < 1:
        return NotImplemented
    sizes = [int(n) for n in batch_sizes.tolist()]
    steps = len(sizes)
    if not sizes or sum(sizes) != data.shape[0] or total_length < 0 or \
            any(a < b for a, b in zip(sizes, sizes[1:])) or sizes[-1] <= 0:
        return NotImplemented  # ATen's own errors
    batch, rest = sizes[0], list(data.shape[1:])
    blocks, t0, offset = [], 0, 0
    for t in range(1, steps + 1):
        if t == steps or sizes[t] != sizes[t0]:
            b = sizes[t0]
            block = data[offset:offset + (t - t0) * b].reshape(
                t - t0, b, *rest)
            if b < batch:
                block = torch.cat([block, block.new_full(
                    [t - t0, batch - b, *rest], padding_value)], 1)
            blocks.append(block)
            offset += (t - t0) * b
            t0 = t
    if total_length > steps:
        blocks.append(data.new_full([total_length - steps, batch, *rest],
                                    padding_value))
    out = blocks[0] if len(blocks) == 1 else torch.cat(blocks)
    with no_dispatch():
        lengths = torch.tensor([sum(1 for n in sizes if n > b)
                                for b in range(batch)], dtype=torch.int64)
    return (out.transpose(0, 1) if batch_first else out), lengths


# function -> (name for --stats, the op type it replaces, lowering)
LOWERINGS = {
    torch._pack_padded_sequence: (
        "torch._pack_padded_sequence", "_pack_padded_sequence__0",
        _pack_padded_sequence),
    torch._pad_packed_sequence: (
        "torch._pad_packed_sequence", "_pad_packed_sequence__0",
        _pad_packed_sequence),
}
