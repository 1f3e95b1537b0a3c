"""Reads the files `tofu-run --save-reference FILE` writes (docs/Runtime.md):
the line `tofu-run reference 1`, the settings line, then per saved tensor
its name, a line; one byte, its runtime element type; a little-endian uint64
byte count; the raw elements. Shared by optimizer_vs_torch.py and
precision_vs_torch.py.
"""

import struct

import torch

# runtime::ElementType's values (runtime/include/tofu/Runtime/Kernel.h).
ELEMENT_TYPES = {0: torch.float32, 1: torch.float64, 2: torch.int64,
                 3: torch.int32, 4: torch.int8, 5: torch.bool,
                 6: torch.float16, 7: torch.bfloat16}


def read_reference(path, tensors):
    """{tensor name: tensor} of the file at `path`; `tensors` maps the
    graph's tensor names to their JSON objects (for the shapes)."""
    values = {}
    with open(path, "rb") as f:
        f.readline()  # magic
        f.readline()  # settings
        while True:
            name = f.readline()
            if not name:
                return values
            name = name.decode().rstrip("\n")
            kind = f.read(1)[0]
            size, = struct.unpack("<Q", f.read(8))
            data = bytearray(f.read(size))
            values[name] = torch.frombuffer(
                data, dtype=ELEMENT_TYPES[kind]).reshape(
                    tensors[name]["shape"])
