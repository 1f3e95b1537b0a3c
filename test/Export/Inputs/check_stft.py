"""Compares tofu-export's real-op lowering of torch.stft and torch.istft
(tofu_export/stft_lowerings.py) with PyTorch's own on random signals, for
the parameters torchaudio's HDemucs uses (Hann window, normalized, centred
with reflection padding, one-sided; n_fft 4096 with hop 1024 as
HDemucs's default, and 64 / 16 as the catalogue's) and others (odd n_fft,
a shorter window, zero padding, two-sided, no centring, `length` shorter
and longer than the signal). Runs the lowerings eagerly on CPU tensors (the
ops a trace records); f32 as models run, errors relative to the largest
magnitude of PyTorch's result. Prints one line per case and exits 1 if an
error exceeds TOL. Then checks that what is not lowered is one error.

usage: check_stft.py TOFU_EXPORT_DIR
"""

import sys

sys.path.insert(0, sys.argv[1])

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from tofu_export import stft_lowerings as S  # noqa: E402
from tofu_export.errors import ModelError  # noqa: E402

TOL = 1e-5

# (name, batch, samples, n_fft, hop, win_length, window, center, pad_mode,
#  normalized, onesided, istft length)
CASES = [
    ("hdemucs-4096", 1, 16384, 4096, 1024, 4096, "hann", True, "reflect",
     True, None, None),
    ("hdemucs-64", 2, 416, 64, 16, 64, "hann", True, "reflect", True, None,
     384),
    ("odd-short-window", 3, 200, 31, 4, 24, "hann-symmetric", True,
     "constant", False, True, None),
    ("two-sided-no-centre", 2, 128, 16, 4, 16, None, False, "reflect",
     False, False, None),
    ("length-longer", 2, 96, 16, 4, 16, None, True, "reflect", True, None,
     110),
]


def window_of(kind, length):
    if kind is None:
        return None
    return torch.hann_window(length, periodic=kind == "hann")


def check(case):
    (name, batch, samples, n_fft, hop, win, kind, center, pad_mode, norm,
     onesided, length) = case
    x = torch.randn(batch, samples)
    w = window_of(kind, win)
    ref = torch.stft(x, n_fft, hop, win, w, center, pad_mode, norm,
                     onesided, return_complex=True)
    got = S._stft(x, n_fft, hop, win, w, center, pad_mode, norm, onesided,
                  return_complex=True)
    ref_r = torch.view_as_real(ref)
    e_stft = ((got.data - ref_r).abs().max() / ref_r.abs().max()).item()
    y_ref = torch.istft(ref, n_fft, hop, win, w, center, norm, onesided,
                        length)
    y_got = S._istft(S.ComplexAsReal(ref_r), n_fft, hop, win, w, center,
                     norm, onesided, length)
    same = y_got.shape == y_ref.shape
    e_istft = ((y_got - y_ref).abs().max() / y_ref.abs().max()).item() \
        if same else float("inf")
    ok = same and got.data.shape == ref_r.shape and \
        e_stft <= TOL and e_istft <= TOL
    print(f"{name}: stft {tuple(ref.shape)} error {e_stft:.1e}, istft "
          f"{tuple(y_ref.shape)} error {e_istft:.1e}: "
          f"{'ok' if ok else 'FAILED'}")
    return ok


def expect_error(label, fn):
    try:
        fn()
    except ModelError as e:
        print(f"{label}: error: {e}")
        return True
    print(f"{label}: no error: FAILED")
    return False


def main():
    torch.manual_seed(0)
    ok = all([check(c) for c in CASES])
    z = S._stft(torch.randn(2, 64), 16, 4, window=torch.hann_window(16),
                return_complex=True)
    ok &= expect_error("abs", lambda: torch.abs(z))
    ok &= expect_error("method", lambda: z.conj())
    ok &= expect_error("reflect pad", lambda: F.pad(z, [1, 1],
                                                    mode="reflect"))
    ok &= expect_error("complex istft", lambda: S._istft(
        z, 16, 4, return_complex=True))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
