"""Lowerings (lowerings.py's mechanism: above autograd, so the backward is
that of the lowered form) of the short-time Fourier transform and its
inverse into real ops the library has specs for, so that a model that goes
through complex spectrograms (torchaudio's HDemucs) exports without a
complex dtype in the graph (docs/Export.md, "Lowerings"):

- `torch.stft(x, n_fft, hop, win_length, window, center, pad_mode,
  normalized, onesided, return_complex)` of a real signal: the centre
  padding (`reflection_pad1d` or `constant_pad_nd`), then one strided
  `convolution` whose 2F kernels are the window times the DFT basis,
  `w[n] cos(2 pi k n / N)` and `-w[n] sin(2 pi k n / N)` (F = N/2 + 1 bins
  one-sided, else N), scaled by N^-1/2 when normalized. The basis is built
  in the step from `arange`, `cos` and `sin` in f64 (accurate angles at
  any N), then cast to the signal's dtype.
- `torch.istft(...)` (real output): each frame's inverse DFT times the
  window, overlap-added, is one transposed strided `convolution` with 2F
  kernels `c_k w[n] cos / N` and `-c_k w[n] sin / N` (c_k = 2 for the
  one-sided bins that stand for two, else 1; the imaginary parts of the DC
  and Nyquist bins drop out as in irfft); the window envelope
  `sum_t w^2[n - t hop]` is the same transposed convolution of ones with
  kernel w^2; the result is trimmed (`center`, `length`), divided by the
  envelope and zero-padded up to `length` as ATen does. ATen's check that
  the envelope is nonzero reads values and is not made.

The complex tensor between them never exists: `stft` returns a
`ComplexAsReal`, which holds the real layout of `torch.view_as_real`
(a trailing dim of 2) and supports what a model does to a spectrogram
before reading it: `view`/`reshape`, indexing, `permute`, `contiguous`,
`F.pad` (constant), `.shape`/`.size()`/`.dim()`, `.real`/`.imag`.
`torch.view_as_real` of it returns the real tensor, `torch.view_as_complex`
of a real tensor wraps it, and `istft` reads it. Anything else done to it
is one error naming the function.
"""

import math

import torch
import torch.nn.functional as F

from .errors import ModelError

_SUPPORTED = ("view/reshape, indexing, permute, contiguous, F.pad "
              "(constant), view_as_real, istft")


class ComplexAsReal:
    """A complex tensor of shape S held as a real tensor of shape S + (2,)
    (`torch.view_as_real`'s layout)."""

    def __init__(self, data: torch.Tensor):
        self.data = data

    # shape queries
    @property
    def shape(self):
        return self.data.shape[:-1]

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return self.data.dim() - 1

    ndim = property(dim)

    @property
    def dtype(self):
        return {torch.float32: torch.complex64,
                torch.float64: torch.complex128}.get(self.data.dtype,
                                                      torch.complex64)

    @property
    def device(self):
        return self.data.device

    @property
    def real(self):
        return self.data[..., 0]

    @property
    def imag(self):
        return self.data[..., 1]

    # layout
    def view(self, *shape):
        return ComplexAsReal(self.data.view(*_shape(shape), 2))

    def reshape(self, *shape):
        return ComplexAsReal(self.data.reshape(*_shape(shape), 2))

    def permute(self, *dims):
        dims = [d % self.dim() for d in _shape(dims)]
        return ComplexAsReal(self.data.permute(*dims, self.dim()))

    def contiguous(self):
        return ComplexAsReal(self.data.contiguous())

    def __getitem__(self, index):
        if not isinstance(index, tuple):
            index = (index,)
        if any(i is Ellipsis for i in index):
            index = index + (slice(None),)  # the trailing (re, im) dim
        return ComplexAsReal(self.data[index])

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (F.pad, torch._C._nn.pad) and args and \
                isinstance(args[0], ComplexAsReal):
            return _pad(*args, **kwargs)
        raise _unsupported(_name(func))

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise _unsupported(f"Tensor.{name}")


def _name(func):
    name = getattr(func, "__name__", None) or str(func)
    module = getattr(func, "__module__", None) or ""
    if module.startswith("torch.nn.functional") or module == "torch._C._nn":
        return f"F.{name}"
    return f"torch.{name}" if name else str(func)


def _unsupported(what):
    """The error for anything else done to a lowered complex tensor, at the
    model's source line."""
    from .trace import user_line
    line = user_line()
    return ModelError(
        f"{what} of a complex tensor{f' at {line}' if line else ''}: "
        "complex tensors exist only between torch.stft and torch.istft, "
        f"which are lowered to real ops ({_SUPPORTED} are supported)")


def _shape(shape):
    if len(shape) == 1 and isinstance(shape[0], (list, tuple, torch.Size)):
        return list(shape[0])
    return list(shape)


def _pad(z, pad, mode="constant", value=None):
    if mode != "constant" or value not in (None, 0, 0.0):
        raise _unsupported(f"F.pad (mode '{mode}', value {value}; only "
                           "zero constant padding is lowered)")
    return ComplexAsReal(F.pad(z.data, [0, 0] + list(pad)))


# --- the DFT basis, built in the step ---------------------------------------

def _basis(n_fft, bins, window):
    """(cos, sin) of 2 pi k n / N for k < bins, n < N, times the window,
    in the window's dtype: two (bins, N) tensors. The angles are computed
    in f64 (k n < 2^53 is exact; at N = 4096 the largest angle, about
    12,900, is within 2e-12 of its value)."""
    n = torch.arange(n_fft, dtype=torch.float64, device=window.device)
    k = torch.arange(bins, dtype=torch.float64, device=window.device)
    angle = (k.unsqueeze(1) * n.unsqueeze(0)) * (2 * math.pi / n_fft)
    cos = torch.cos(angle).to(window.dtype) * window
    sin = torch.sin(angle).to(window.dtype) * window
    return cos, sin


def _full_window(window, win_length, n_fft, like):
    """The window of length N: ones where none is given, a shorter one
    centred with zeros (as ATen pads it)."""
    if window is None:
        window = torch.ones(win_length, dtype=like.dtype, device=like.device)
    if window.shape[-1] != n_fft:
        left = (n_fft - window.shape[-1]) // 2
        window = F.pad(window, [left, n_fft - window.shape[-1] - left])
    return window


# --- torch.stft ----------------------------------------------------------------

def _stft(input, n_fft, hop_length=None, win_length=None, window=None,
          center=True, pad_mode="reflect", normalized=False, onesided=None,
          return_complex=None):
    if not isinstance(input, torch.Tensor) or input.is_complex() or \
            return_complex is None or \
            (window is not None and window.is_complex()) or \
            input.dim() not in (1, 2):
        return NotImplemented  # ATen's errors, or an op it records
    hop = hop_length if hop_length is not None else n_fft // 4
    win_length = win_length if win_length is not None else n_fft
    batched = input.dim() == 2
    x = input if batched else input.unsqueeze(0)
    x = x.unsqueeze(1)  # (B, 1, L)
    if center:
        half = n_fft // 2
        x = F.pad(x, [half, half], mode=pad_mode)
    window = _full_window(window, win_length, n_fft, input)
    bins = n_fft // 2 + 1 if onesided is None or onesided else n_fft
    cos, sin = _basis(n_fft, bins, window)
    kernels = torch.cat([cos, -sin], 0).unsqueeze(1)  # (2F, 1, N)
    if normalized:
        kernels = kernels * (1.0 / math.sqrt(n_fft))
    z = F.conv1d(x, kernels, stride=hop)  # (B, 2F, T)
    z = z.view(z.shape[0], 2, bins, z.shape[-1]).permute(0, 2, 3, 1)
    if not batched:
        z = z.squeeze(0)
    return ComplexAsReal(z) if return_complex else z


# --- torch.istft ---------------------------------------------------------------

def _istft(input, n_fft, hop_length=None, win_length=None, window=None,
           center=True, normalized=False, onesided=None, length=None,
           return_complex=False):
    if not isinstance(input, ComplexAsReal):
        return NotImplemented
    if return_complex:
        raise _unsupported("torch.istft with return_complex=True")
    z = input.data  # (B, F, T, 2) or (F, T, 2)
    batched = z.dim() == 4
    if not batched:
        z = z.unsqueeze(0)
    hop = hop_length if hop_length is not None else n_fft // 4
    win_length = win_length if win_length is not None else n_fft
    bins, frames = z.shape[1], z.shape[2]
    if onesided is None:
        onesided = bins != n_fft
    if bins != (n_fft // 2 + 1 if onesided else n_fft):
        raise ModelError(f"torch.istft: {bins} frequency bins do not fit "
                         f"n_fft {n_fft} ({'one' if onesided else 'two'}-"
                         "sided)")
    window = _full_window(window, win_length, n_fft, z)
    cos, sin = _basis(n_fft, bins, window)
    scale = _bin_weights(bins, n_fft, onesided, z).unsqueeze(1) / n_fft
    if normalized:
        scale = scale * math.sqrt(n_fft)
    kernels = torch.cat([cos * scale, -sin * scale], 0).unsqueeze(1)
    spec = z.permute(0, 3, 1, 2).reshape(z.shape[0], 2 * bins, frames)
    y = F.conv_transpose1d(spec, kernels, stride=hop)  # (B, 1, L)
    ones = torch.ones(1, 1, frames, dtype=z.dtype, device=z.device)
    envelope = F.conv_transpose1d(ones, (window * window).view(1, 1, -1),
                                  stride=hop)
    expected = n_fft + hop * (frames - 1)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = expected - n_fft // 2 if center else expected
    y = y[..., start:min(end, expected)] / \
        envelope[..., start:min(end, expected)]
    if end > expected:
        y = F.pad(y, [0, end - expected])
    y = y.squeeze(1)
    return y if batched else y.squeeze(0)


def _bin_weights(bins, n_fft, onesided, like):
    """c_k: 2 for the one-sided bins that stand for their mirror image too,
    1 for DC, Nyquist (N even) and every bin of a two-sided transform;
    built from `full` and `cat` (a constant would carry no values)."""
    def full(count, value):
        return torch.full((count,), value, dtype=like.dtype,
                          device=like.device)
    if not onesided:
        return full(bins, 1.0)
    inner = bins - 1 - (n_fft % 2 == 0)
    parts = [full(1, 1.0), full(inner, 2.0)] if inner else [full(1, 1.0)]
    if n_fft % 2 == 0 and bins > 1:
        parts.append(full(1, 1.0))
    return torch.cat(parts)


def _view_as_real(z):
    if not isinstance(z, ComplexAsReal):
        return NotImplemented
    return z.data


def _view_as_complex(x):
    if not isinstance(x, torch.Tensor) or x.shape[-1:] != (2,):
        return NotImplemented
    return ComplexAsReal(x)


# function -> (name for --stats, the op type it replaces, lowering)
LOWERINGS = {
    torch.stft: ("torch.stft", "_fft_r2c", _stft),
    torch.functional.stft: ("torch.stft", "_fft_r2c", _stft),
    torch.Tensor.stft: ("torch.stft", "_fft_r2c", _stft),
    torch.istft: ("torch.istft", "_fft_c2r", _istft),
    torch.view_as_real: ("torch.view_as_real", "view_as_real",
                         _view_as_real),
    torch.view_as_complex: ("torch.view_as_complex", "view_as_complex",
                            _view_as_complex),
}
