"""Runs one PyTorch MLP step of bench/runtime-vs-torch.py on one thread and
prints the threads the loaded OpenBLAS reports before and after."""

import ctypes
import importlib.util
import sys

spec = importlib.util.spec_from_file_location("bench", sys.argv[1])
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)  # imports torch, which loads OpenBLAS

with open("/proc/self/maps") as maps:
    paths = sorted({line.split()[-1] for line in maps if "openblas" in line})
if not paths:
    sys.exit("torch loaded no OpenBLAS")
lib = ctypes.CDLL(paths[0])
lib.openblas_set_num_threads(2)
print(f"before: OpenBLAS {lib.openblas_get_num_threads()} thread(s)")
bench.torch_step_seconds("mlp", 1, 1)
print(f"after a step on 1 thread(s): OpenBLAS "
      f"{lib.openblas_get_num_threads()} thread(s), torch "
      f"{bench.torch.get_num_threads()}")
