"""Models for test/Export/fold-lengths.test: integer arithmetic on lengths
given as values (folded into constants) and tensors without elements
(dropped), in the forms torchaudio's Emformer uses them."""

import torch


class LengthArithmetic(torch.nn.Module):
    """A padding mask from lengths through a full `max` reduction, an
    i64 -> i32 copy and mixed-dtype integer additions (Emformer's
    `_gen_padding_mask`)."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(4))

    def forward(self, x, lengths):
        t = x.size(1)
        longest = torch.max(lengths).int()
        shifted = lengths + (t - longest)
        mask = torch.arange(t, device=x.device).expand(
            lengths.size(0), t) >= shifted.unsqueeze(1)
        return (x * self.w).masked_fill(mask.unsqueeze(-1), 0.0)


class EmptyParts(torch.nn.Module):
    """Parts without elements: an empty slice (no left context), an empty
    1-d tensor as "no memory" in a `cat` (which skips it) and an empty
    block of an attention mask."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):  # [B, T, 4]
        y = self.fc(x)
        t = y.size(1)
        left = y[:, :0]
        memory = torch.empty(0, device=x.device)
        keys = torch.cat([left.transpose(0, 1), y.transpose(0, 1), memory],
                         dim=0).transpose(0, 1)
        block = torch.cat([torch.zeros(t, 0, device=x.device),
                           torch.ones(t, t - 1, device=x.device),
                           torch.zeros(t, 1, device=x.device)], dim=1)
        scores = (y @ keys.transpose(1, 2)).masked_fill(
            (1 - block).to(torch.bool), -1e4)
        return torch.softmax(scores, -1) @ keys
