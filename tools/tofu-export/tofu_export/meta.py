"""This file implements building models on the meta device (no storage is
ever allocated for weights) and the Meta kernels that PyTorch 1.13 lacks for
ATen ops a training step needs. The kernels are registered once, through
`torch.library.Library("aten", "IMPL", "Meta")`; each only computes output
shapes and dtypes: convolution_backward, the adaptive average pooling and
padding backwards, `_weight_norm_interface` (nn.utils.weight_norm, which
computes a weight already while the model is built) and its backward.
"""

import contextlib

import torch
import torch.utils._pytree as pytree
from torch.overrides import TorchFunctionMode

from tofu_export import meta_losses

# Factory functions that accept `device=`; module constructors call these
# (through nn.Parameter(torch.empty(...)) and friends) for weights. Value
# factories (`torch.arange`, `torch.linspace`, `torch.tensor`) stay real:
# constructors read their values (RegNet's `torch.arange(d).tolist()`
# widths, Swin's relative position indices), their sizes come from Python
# numbers and are small, and `to_meta` moves any buffer they become.
_FACTORIES = {
    torch.empty, torch.zeros, torch.ones, torch.full, torch.rand,
    torch.randn, torch.randint, torch.eye, torch.empty_strided,
}


class _MetaFactories(TorchFunctionMode):
    """Redirect tensor factories to the meta device."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func in _FACTORIES:
            kwargs["device"] = "meta"
        if func is torch.Tensor.cpu and args[0].is_meta:
            # An initializer's round trip through the CPU (torchaudio's
            # wav2vec2 `data.copy_(data.cpu().normal_().to(data.device))`):
            # a meta weight has no values to copy; it stays on meta.
            return torch.empty_like(args[0])
        try:
            return func(*args, **kwargs)
        except RuntimeError as e:
            # A weight computed from a value factory's real result
            # (HDemucs: `weight / torch.arange(1, n + 1).sqrt()`): the same
            # op with the real tensors moved to meta.
            if "same device" not in str(e):
                raise
            args, kwargs = pytree.tree_map(_to_meta_tensor, (args, kwargs))
            return func(*args, **kwargs)


def _to_meta_tensor(x):
    if isinstance(x, torch.Tensor) and not x.is_meta:
        return x.to("meta")
    return x


@contextlib.contextmanager
def meta_construction():
    """Within this context, modules allocate their tensors on `meta`."""
    with _MetaFactories():
        yield


def to_meta(model: torch.nn.Module) -> torch.nn.Module:
    """Move whatever construction left elsewhere onto the meta device."""
    return model.to("meta")


def _convolution_backward(grad_output, input, weight, bias_sizes, stride,
                          padding, dilation, transposed, output_padding,
                          groups, output_mask):
    grad_input = input.new_empty(input.shape) if output_mask[0] else None
    grad_weight = weight.new_empty(weight.shape) if output_mask[1] else None
    grad_bias = None
    if output_mask[2]:
        grad_bias = grad_output.new_empty(
            list(bias_sizes) if bias_sizes is not None else [weight.shape[0]])
    return grad_input, grad_weight, grad_bias


def _like_self(grad_output, self, *rest):
    """Backward kernels whose only output has the shape of `self`."""
    return self.new_empty(self.shape)


def _weight_norm_interface(v, g, dim=0):
    """nn.utils.weight_norm's fused kernel: w = v * g / ||v|| (norms over
    all dims but `dim`, shaped like g)."""
    return v.new_empty(v.shape), g.new_empty(g.shape)


def _weight_norm_interface_backward(grad_w, saved_v, saved_g, saved_norms,
                                    dim):
    return saved_v.new_empty(saved_v.shape), saved_g.new_empty(saved_g.shape)


# Backward ops whose gradient has the shape of their second argument.
_LIKE_SELF = ["_adaptive_avg_pool2d_backward", "_adaptive_avg_pool3d_backward",
              "reflection_pad2d_backward", "replication_pad2d_backward",
              "replication_pad3d_backward", "max_pool3d_with_indices_backward"]


def _pooling_output_size(size, kernel, stride, pad, dilation, ceil_mode):
    """ATen's pooling_output_shape: the windows that start inside the input
    or its left padding (ceil_mode rounds up, then drops a last window that
    would start in the right padding)."""
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    out = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _max_pool3d_with_indices(self, kernel_size, stride=(), padding=0,
                             dilation=1, ceil_mode=False):
    """Values and i64 indices of a 3-d max pooling over [N,] C, D, H, W."""
    def three(v, default):
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        v = v or list(default)
        return v * 3 if len(v) == 1 else v
    kernel = three(kernel_size, ())
    stride = three(stride, kernel)
    padding, dilation = three(padding, ()), three(dilation, ())
    if self.dim() not in (4, 5) or len(kernel) != 3:
        raise RuntimeError("max_pool3d_with_indices: expected a 4-d or 5-d "
                           f"input and 3 kernel sizes, got {list(self.shape)}"
                           f" and {kernel}")
    spatial = [_pooling_output_size(self.shape[-3 + i], kernel[i], stride[i],
                                    padding[i], dilation[i], ceil_mode)
               for i in range(3)]
    shape = list(self.shape[:-3]) + spatial
    return (self.new_empty(shape),
            self.new_empty(shape, dtype=torch.int64))


def _upsample_nearest3d_vec(input, output_size, scale_factors):
    """[N, C, D, H, W] -> the given output size, or each extent times its
    scale factor, rounded down (ATen's compute_output_size)."""
    if output_size is None:
        output_size = [int(s * f) for s, f in zip(input.shape[2:],
                                                  scale_factors)]
    return input.new_empty(list(input.shape[:2]) + list(output_size))


def _upsample_nearest3d_backward_vec(grad_output, output_size, input_size,
                                     scale_factors):
    return grad_output.new_empty(list(input_size))


def _needs_meta_kernel(name: str) -> bool:
    """Whether aten::`name` has no Meta kernel in this PyTorch build."""
    return not torch._C._dispatch_has_kernel_for_dispatch_key(
        f"aten::{name}", "Meta")


_LIBRARY = None


def register_meta_kernels() -> None:
    """Register the missing Meta kernels (idempotent)."""
    global _LIBRARY
    if _LIBRARY is not None:
        return
    _LIBRARY = torch.library.Library("aten", "IMPL", "Meta")
    if _needs_meta_kernel("convolution_backward"):
        _LIBRARY.impl("convolution_backward", _convolution_backward)
    if _needs_meta_kernel("max_pool3d_with_indices"):
        _LIBRARY.impl("max_pool3d_with_indices", _max_pool3d_with_indices)
    for name, kernel in (
            ("upsample_nearest3d.vec", _upsample_nearest3d_vec),
            ("upsample_nearest3d_backward.vec",
             _upsample_nearest3d_backward_vec)):
        if _needs_meta_kernel(name):
            _LIBRARY.impl(name, kernel)
    for name, kernel in (
            ("_weight_norm_interface", _weight_norm_interface),
            ("_weight_norm_interface_backward",
             _weight_norm_interface_backward)):
        if _needs_meta_kernel(name):
            _LIBRARY.impl(name, kernel)
    for name in _LIKE_SELF:
        if _needs_meta_kernel(name):
            _LIBRARY.impl(name, _like_self)
    for name, kernel in meta_losses.KERNELS.items():
        if _needs_meta_kernel(name):
            _LIBRARY.impl(name, kernel)
