"""Lowerings (lowerings.py's mechanism: above autograd, so the backward is
that of the lowered form) of two torch.nn loss functions that PyTorch 1.13
cannot trace over meta tensors, into ops the library has specs for:

- `F.cross_entropy` with `label_smoothing > 0` and class-index targets:
  ATen averages the smoothing term with `masked_select(...).mean()` (or
  divides by `weight.gather(0, target.masked_select(...))`), whose shape
  depends on the targets' values. Lowered to ATen's formula with the
  ignored targets masked to 0 instead of selected out: the same value.
- `F.gaussian_nll_loss`: it checks `torch.any(var < 0)` in Python
  (data-dependent control flow) and clamps a clone of var in place under
  no_grad. Lowered without the check (the graph cannot look at values) and
  with the clamp written as `var + (clamp(var, eps) - var).detach()`: the
  same value, and the same straight-through gradient.
"""

import math

import torch
import torch.nn.functional as F


def _cross_entropy(input, target, weight=None, size_average=None,
                   ignore_index=-100, reduce=None, reduction="mean",
                   label_smoothing=0.0):
    if (label_smoothing == 0.0 or target.is_floating_point() or
            size_average is not None or reduce is not None or
            input.dim() < 2):
        return NotImplemented
    logp = F.log_softmax(input, 1)
    nll = F.nll_loss(logp, target, weight, ignore_index=ignore_index,
                     reduction=reduction)
    terms = logp
    if weight is not None:
        terms = logp * weight.view([1, -1] + [1] * (input.dim() - 2))
    ignored = target == ignore_index
    smooth = (-terms.sum(1)).masked_fill(ignored, 0.0)
    if reduction == "mean":
        kept = (target != ignore_index).to(input.dtype)
        if weight is not None:
            kept = kept * weight[target.masked_fill(ignored, 0)]
        smooth = smooth.sum() / kept.sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return ((1.0 - label_smoothing) * nll +
            smooth * (label_smoothing / input.shape[1]))


def _gaussian_nll_loss(input, target, var, full=False, eps=1e-6,
                       reduction="mean"):
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = torch.unsqueeze(var, -1)
        elif not (input.size()[:-1] == var.size()[:-1] and
                  var.size(-1) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var + (var.clamp(min=eps) - var).detach()
    loss = 0.5 * (torch.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# function -> (name for --stats, the op type it replaces, lowering), as in
# lowerings.LOWERINGS. gaussian_nll_loss has no ATen op: its type names the
# function, which no spec defines, so the lowering always applies (but with
# --no-decompose).
LOWERINGS = {
    F.cross_entropy: ("F.cross_entropy(label_smoothing)", "masked_select",
                      _cross_entropy),
    F.gaussian_nll_loss: ("F.gaussian_nll_loss", "gaussian_nll_loss",
                          _gaussian_nll_loss),
}
