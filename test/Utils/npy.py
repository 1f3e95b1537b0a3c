"""Writes and prints small .npy files for the tdl-eval tests, without numpy.

    npy.py make OUT.npy DTYPE SHAPE V1 V2 ...   DTYPE f32|f64|i64, SHAPE 2x3
                                               or "scalar"; row-major values
    npy.py print FILE.npy                      `DTYPE SHAPE`, then one line
                                               per row of the last dimension
"""
import ast
import struct
import sys

CODES = {"f32": ("<f4", "f"), "f64": ("<f8", "d"), "i64": ("<i8", "q"),
         "i32": ("<i4", "i"), "bool": ("|b1", "?")}


def make(path, dtype, shape_text, values):
    shape = [] if shape_text == "scalar" else [int(d) for d in
                                               shape_text.split("x")]
    descr, code = CODES[dtype]
    dims = "".join(f"{d}, " for d in shape).rstrip(" ")
    if len(shape) > 1:
        dims = dims.rstrip(",")
    header = f"{{'descr': '{descr}', 'fortran_order': False, " \
             f"'shape': ({dims}), }}"
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    cast = float if dtype[0] == "f" else int
    data = struct.pack("<" + code * len(values), *[cast(v) for v in values])
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
                header.encode() + data)


def show(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<H", raw[8:10])[0]
    header = ast.literal_eval(raw[10:10 + n].decode())
    dtype = next(k for k, (d, _) in CODES.items() if d == header["descr"])
    shape = list(header["shape"])
    code = CODES[dtype][1]
    count = 1
    for d in shape:
        count *= d
    values = struct.unpack("<" + code * count, raw[10 + n:])
    print(dtype, "x".join(map(str, shape)) or "scalar")
    row = shape[-1] if shape else 1
    for i in range(0, count, max(row, 1)):
        print(" ".join(f"{v:g}" if isinstance(v, float) else str(int(v))
                       for v in values[i:i + row]))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    else:
        show(sys.argv[2])
