"""Checks tofu_export/torch_fixes.py, the corrected PyTorch CPU kernels that
replays (and the eager steps they are compared with) run with: after
`tofu_export.replay` is imported, `aten.gelu_backward` of a float32
grad_output that is a transposed (non-contiguous) view and a contiguous
`self` (nn.GELU followed by a transpose: torchaudio's Wav2Vec2 feature
extractor) equals the float64 gradient of GELU written with other ops
(x * ndtr(x); the tanh form), for both `approximate` modes, and so does the
gradient autograd computes through nn.GELU and a transpose. PyTorch 1.13's own float32 kernel reads such a
grad_output as if it were contiguous.

usage: check_torch_fixes.py TOFU_EXPORT_DIR
Prints one `...: ok` line per check; exits 1 on a failure."""

import sys

sys.path.insert(0, sys.argv[1])

import torch  # noqa: E402

from tofu_export import replay  # noqa: E402, F401  (installs the fixes)



def gelu(x, mode):
    """GELU written with other ops, so that its float64 gradient by
    autograd is a reference that never calls gelu_backward."""
    if mode == "tanh":
        k = (2.0 / torch.pi) ** 0.5
        return 0.5 * x * (1 + torch.tanh(k * (x + 0.044715 * x ** 3)))
    return x * torch.special.ndtr(x)


torch.manual_seed(0)
x = torch.randn(2, 8, 5)
grad = torch.randn(2, 5, 8).transpose(1, 2)  # [2, 8, 5], not contiguous
ok = True
for mode in ("none", "tanh"):
    got = torch.ops.aten.gelu_backward(grad, x, approximate=mode)
    xd = x.double().requires_grad_(True)
    (want,) = torch.autograd.grad(gelu(xd, mode), xd, grad.double())
    good = torch.allclose(got.double(), want, rtol=1e-5, atol=1e-6)
    ok &= good
    print(f"gelu_backward approximate={mode}, transposed grad_output: "
          f"{'ok' if good else 'WRONG'}")

xr = x.clone().requires_grad_(True)
weight = torch.randn(2, 5, 8)
(g,) = torch.autograd.grad(
    (torch.nn.functional.gelu(xr).transpose(1, 2) * weight).sum(), xr)
xd = x.double().requires_grad_(True)
(gd,) = torch.autograd.grad(
    (gelu(xd, "none").transpose(1, 2) * weight.double()).sum(), xd)
good = torch.allclose(g.double(), gd, rtol=1e-5, atol=1e-6)
ok &= good
print(f"autograd through nn.GELU and a transpose: "
      f"{'ok' if good else 'WRONG'}")
sys.exit(0 if ok else 1)
