"""The loss of const_model.ScaledByConstant on fixed weights and input.

  constant_loss.py write PREFIX   writes PREFIX.weight.npy, PREFIX.bias.npy
                                  and PREFIX.input.npy
  constant_loss.py check PREFIX REPORT.json
                                  compares the report's first loss with
                                  PyTorch's on those values; exits 1 beyond
                                  1e-6 relative"""

import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from const_model import ScaledByConstant  # noqa: E402

torch.manual_seed(7)
model = ScaledByConstant()
x = torch.rand(2, 4) * 4 - 2
prefix = sys.argv[2]
if sys.argv[1] == "write":
    np.save(prefix + ".weight.npy", model.lin.weight.detach().numpy())
    np.save(prefix + ".bias.npy", model.lin.bias.detach().numpy())
    np.save(prefix + ".input.npy", x.numpy())
    sys.exit(0)
expected = float(model(x))
got = json.load(open(sys.argv[3]))["losses"][0]
ok = got is not None and abs(got - expected) <= 1e-6 * abs(expected)
print(f"loss {got} against PyTorch's {expected:.9g}: "
      f"{'ok' if ok else 'DIFFERENT'}")
sys.exit(0 if ok else 1)
