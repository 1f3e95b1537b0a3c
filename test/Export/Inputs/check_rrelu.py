"""Replays the step of activation_ops.py:RReLUOps (tofu-export's lowering of
nn.RReLU) with PyTorch's kernels and checks it against nn.RReLU's
definition: each layer's slopes lie in [lower, upper] where its input is
<= 0 and are 1 elsewhere, not all equal (drawn), and the gradient of `gain`
is autograd's through x * slopes with the same slopes.

usage: check_rrelu.py TOFU_EXPORT_DIR MODEL_FILE
Prints `rrelu: ...: ok` per layer and `gain gradient: ok`; exits 1 on a
failure."""

import sys

sys.path.insert(0, sys.argv[1])

import torch  # noqa: E402

from tofu_export import replay  # noqa: E402

doc, values, _ = replay.replay([f"{sys.argv[2]}:RReLUOps", "--input",
                                "2x3x6", "--loss", "output"])
ops = {op["name"]: op for op in doc["ops"]}
ok = True
slopes = {}
for layer, (lower, upper) in (("rrelu", (1 / 8, 1 / 3)),
                              ("rrelu_", (0.1, 0.3))):
    x = values[ops[f"{layer}.le_Scalar"]["inputs"][0]]
    s = values[f"{layer}.where_self"]
    neg = x <= 0
    good = (bool(((s >= lower) & (s <= upper))[neg].all()) and
            bool((s[~neg] == 1).all()) and s[neg].unique().numel() > 1)
    print(f"{layer}: {int(neg.sum())} slopes drawn in [{lower:.3g}, "
          f"{upper:.3g}], {int((~neg).sum())} equal to 1: "
          f"{'ok' if good else 'WRONG'}")
    ok &= good
    slopes[layer] = s
gain = values["gain"].clone().requires_grad_(True)
h = values["input"] * gain
y = h * slopes["rrelu"] + (h * 2.0) * slopes["rrelu_"]
(y * y).sum().backward()
grad = next(values[t["name"]] for t in doc["tensors"]
            if t.get("grad_of") == "gain")
good = torch.allclose(grad, gain.grad, rtol=1e-4, atol=1e-5)
print(f"gain gradient: {'ok' if good else 'WRONG'}")
sys.exit(0 if ok and good else 1)
