"""Models whose training steps go through torch.stft and torch.istft with
the parameters torchaudio's HDemucs uses and others, lowered by tofu-export
into real ops (tofu_export/stft_lowerings.py): hann_window (periodic and
symmetric), the f64 DFT basis (arange, cos, sin), strided and transposed
convolutions, reflection and constant padding. Input: x [2, 1, 96]."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class StftOps(nn.Module):
    """HDemucs's spectrogram and its inverse (n_fft 32, hop 8, Hann
    window, normalized, centred with reflection padding), with the
    spectrogram's real layout scaled by a parameter in between, and the
    complex steps HDemucs takes (view, slicing, zero padding)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 1, 3, padding=1)
        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, 17))

    def forward(self, x):
        x = self.conv(x)  # [2, 1, 96]
        length = x.shape[-1]
        z = torch.stft(x.reshape(-1, length), 32, 8,
                       window=torch.hann_window(32).to(x), win_length=32,
                       normalized=True, center=True, return_complex=True,
                       pad_mode="reflect")  # [2, 17, 13] complex
        z = z.view(2, 1, 17, 13)[..., :-1, :]  # HDemucs drops the top bin
        m = torch.view_as_real(z).permute(0, 1, 4, 2, 3)  # [2, 1, 2, 16, 13]
        m = m * self.scale[:-1, None]
        out = m.permute(0, 1, 3, 4, 2).contiguous()
        z = torch.view_as_complex(out)
        z = F.pad(z, [0, 0, 0, 1])  # the top bin back, zero
        y = torch.istft(z.view(-1, 17, 13), 32, 8,
                        window=torch.hann_window(32).to(z.real),
                        win_length=32, normalized=True, length=length,
                        center=True)
        return (y * y).mean() + (m * m).mean()


class StftVariants(nn.Module):
    """Other parameters: an odd n_fft with a shorter symmetric window
    padded to it, zero padding, not normalized; a two-sided transform
    without a window and without centring; a normalized one without a
    window whose inverse is zero-padded up to a longer `length`."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 2, 3, padding=1)

    def forward(self, x):
        x = self.conv(x).reshape(-1, 96)  # [4, 96]
        w = torch.hann_window(24, periodic=False).to(x)
        z = torch.stft(x, 31, 4, win_length=24, window=w, center=True,
                       pad_mode="constant", return_complex=True)
        y = torch.istft(z, 31, 4, win_length=24, window=w, center=True)
        z2 = torch.stft(x, 16, 4, center=False, onesided=False,
                        return_complex=True)
        y2 = torch.istft(z2, 16, 4, center=False, onesided=False)
        z3 = torch.stft(x, 16, 4, normalized=True, return_complex=True)
        y3 = torch.istft(z3, 16, 4, normalized=True, length=110)
        r = torch.view_as_real(z)
        return (y * y).mean() + (y2 * y2).mean() + (y3 * y3).mean() + \
            (r * r).mean()
