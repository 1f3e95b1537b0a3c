"""A model with what torchaudio's Tacotron2 needs of tofu-export: a batch
packed by lengths given as values (`pack_padded_sequence`, lowered by
tofu_export/rnn_lowerings.py), an LSTM over the packed batch and
`pad_packed_sequence`; a `.byte()` mask sized by the lengths (a u8
constant of the step); a squeeze of a dim whose extent is not 1 (the
identity); and a weight initialized through the CPU while the model is
built (torchaudio's wav2vec2 initializer, on the meta device). Inputs:
x [2, T, 4] and lengths [2], sorted, longest first."""

import torch
import torch.nn as nn


class PackedLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 3, batch_first=True)
        self.w = nn.Parameter(torch.empty(3, 3))
        data = self.w.data
        data.copy_(data.cpu().normal_(mean=0.0, std=0.5).to(data.device))

    def forward(self, x, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(),
                                                   batch_first=True)
        out, _ = self.lstm(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        ids = torch.arange(out.shape[1], device=lengths.device,
                           dtype=lengths.dtype)
        mask = (ids < lengths.unsqueeze(1)).byte()  # [2, T], u8
        padding = torch.le(mask, 0)
        h = out.masked_fill(padding.unsqueeze(2), 0.0) @ self.w
        return (h.sum(1).squeeze(1) ** 2).sum()
