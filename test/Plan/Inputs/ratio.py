"""Prints `NAME ratio R` for the comm_bytes of two plan files (A / B).

usage: ratio.py NAME A.json B.json
"""
import json
import sys

name, a, b = sys.argv[1:4]
with open(a) as fa, open(b) as fb:
    ra, rb = json.load(fa)["comm_bytes"], json.load(fb)["comm_bytes"]
print(f"{name} ratio {ra / rb:.4f}")
