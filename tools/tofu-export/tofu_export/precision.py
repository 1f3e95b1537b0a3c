"""This file implements `--precision bf16|fp16`: the casts of mixed-precision
training, applied to the forward pass and the loss the way torch.autocast
applies them, as a TorchFunctionMode (above autograd, so that the backward
pass differentiates the casts: gradients flow back to the fp32 parameters
through `_to_copy` ops, and the optimizer updates fp32 master weights).

The policy (docs/Export.md, "Mixed precision"):
- LOWER ops (matrix products, convolutions, and so attention's products)
  cast their floating-point tensor arguments to the 16-bit dtype;
- FP32 ops (softmax and log-softmax, the losses, the norms, sums and means,
  exp/log/pow) cast theirs to float32, so reductions and norms run in fp32;
- every other op runs in the dtype of its arguments (PyTorch's type
  promotion: a 16-bit tensor plus a float32 one is float32).

This is torch.autocast's CUDA policy for the ops the bundled models use.
PyTorch 1.13's CPU autocast differs in leaving softmax, layer_norm and sum in
bf16; on the MLP (linears, ReLU, cross-entropy) the two are the same.

fp16 also scales the loss by a static factor before the backward pass and
unscales the gradients before the optimizer (torch.cuda.amp.GradScaler with
a fixed scale and no skipped steps).
"""

from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}

T = torch.Tensor
LOWER = {
    F.linear, F.conv1d, F.conv2d, F.conv3d, F.conv_transpose1d,
    F.conv_transpose2d, F.conv_transpose3d, F.bilinear,
    torch.matmul, torch.mm, torch.bmm, torch.addmm, torch.baddbmm,
    torch.addbmm, torch.einsum,
    T.matmul, T.__matmul__, T.__rmatmul__, T.mm, T.bmm, T.addmm, T.baddbmm,
}
FP32 = {
    F.softmax, F.log_softmax, torch.softmax, torch.log_softmax, T.softmax,
    T.log_softmax, F.cross_entropy, F.nll_loss, F.mse_loss, F.l1_loss,
    F.smooth_l1_loss, F.kl_div, F.binary_cross_entropy_with_logits,
    F.layer_norm, F.group_norm, F.batch_norm, F.instance_norm,
    torch.sum, torch.mean, T.sum, T.mean, torch.logsumexp, T.logsumexp,
    torch.cumsum, T.cumsum, torch.prod, T.prod, torch.norm, T.norm,
    torch.exp, T.exp, torch.log, T.log, torch.pow, T.pow, T.__pow__,
    torch.rsqrt, T.rsqrt, torch.reciprocal, T.reciprocal, F.softplus,
}


@dataclass
class Precision:
    """The exported step's precision: `name` fp32, bf16 or fp16."""

    name: str = "fp32"
    loss_scale: float = 1.0

    @property
    def mixed(self) -> bool:
        return self.name != "fp32"

    def mode(self) -> Optional[TorchFunctionMode]:
        return AutocastMode(DTYPES[self.name]) if self.mixed else None

    def metadata(self) -> dict:
        """The graph metadata's fields: none for fp32 (so an fp32 graph is
        as before), else `precision` and, for fp16, `loss_scale`."""
        if not self.mixed:
            return {}
        meta = {"precision": self.name}
        if self.name == "fp16":
            meta["loss_scale"] = self.loss_scale
        return meta


def _cast(value, dtype):
    if isinstance(value, torch.Tensor) and value.is_floating_point() \
            and value.dtype != dtype and value.dtype != torch.float64:
        return value.to(dtype)
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, dtype) for v in value)
    return value


class AutocastMode(TorchFunctionMode):
    """Casts the arguments of LOWER ops to `low` and of FP32 ops to float32
    (see the module's docstring)."""

    def __init__(self, low: torch.dtype):
        super().__init__()
        self.low = low

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        dtype = self.low if func in LOWER else \
            torch.float32 if func in FP32 else None
        if dtype is not None:
            args = _cast(args, dtype)
            kwargs = {k: _cast(v, dtype) for k, v in kwargs.items()}
        return func(*args, **kwargs)
