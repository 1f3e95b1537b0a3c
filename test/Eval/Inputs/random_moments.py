"""Drives moments_differ of utils/check-specs-against-torch.py (see
test/Eval/random-moments.test)."""
import importlib.util
import sys

import numpy as np

spec = importlib.util.spec_from_file_location("check_specs", sys.argv[1])
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)
rng = np.random.default_rng(1)
n = check.RANDOM_DRAWS
a, b = rng.normal(0, 1, n), rng.normal(0, 1, n)
print("same distribution:", check.moments_differ(a, b))
print("shifted mean:", check.moments_differ(a + 0.05, b))
print("scaled variance:", check.moments_differ(a * 1.05, b))
print("uniform for normal:", check.moments_differ(rng.uniform(0, 1, n), b))
