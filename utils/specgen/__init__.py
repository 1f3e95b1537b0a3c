"""Generators of the rank-generic operator families, one module per family.

Each module exposes one function that returns the text of one specs/ file;
utils/gen-specs.py lists them in its FILES table, so `gen-specs.py` writes
and `gen-specs.py --check` checks every generated file. A family whose
definitions differ only by rank (a convolution's spatial axes, a pooling
window, the normalized dims of a norm) is written once here as a per-axis
template and expanded for each rank (docs/OperatorLibrary.md, "Rank-generic
operators").
"""
