"""This file implements the multi-layer LSTM language model of the Tofu
paper's RNN experiments, unrolled over a fixed number of steps. Cells are
written with matrix products and element-wise gates (one input and one
recurrent weight matrix per gate), so the training step is made of `mm`,
`addmm`, `sigmoid`, `tanh`, `mul` and `add`; tokens are embedded per step and
each step's hidden state is projected to the vocabulary and scored with
softmax cross-entropy.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..scopes import scope

GATES = ("i", "f", "g", "o")


class LSTMCell(nn.Module):
    """One LSTM layer's cell: h', c' = cell(x, h, c)."""

    def __init__(self, input_size: int, hidden: int):
        super().__init__()
        self.w = nn.ParameterDict({
            g: nn.Parameter(torch.empty(input_size, hidden)) for g in GATES})
        self.u = nn.ParameterDict({
            g: nn.Parameter(torch.empty(hidden, hidden)) for g in GATES})
        self.b = nn.ParameterDict({
            g: nn.Parameter(torch.empty(hidden)) for g in GATES})
        bound = 1.0 / hidden ** 0.5  # as torch.nn.LSTM
        for p in self.parameters():
            nn.init.uniform_(p, -bound, bound)

    def _gate(self, g, x, h):
        return torch.addmm(self.b[g], x, self.w[g]) + torch.mm(h, self.u[g])

    def forward(self, x, h, c):
        i = torch.sigmoid(self._gate("i", x, h))
        f = torch.sigmoid(self._gate("f", x, h))
        g = torch.tanh(self._gate("g", x, h))
        o = torch.sigmoid(self._gate("o", x, h))
        c = f * c + i * g
        return o * torch.tanh(c), c


class LSTMLanguageModel(nn.Module):
    """Embedding, `layers` LSTM layers of width `hidden`, `steps` unrolled
    steps, a vocabulary projection and the mean cross-entropy over steps.

    forward(tokens[B, steps] i64, targets[B, steps] i64) -> loss
    """

    def __init__(self, layers: int, hidden: int, vocab: int, steps: int = 20):
        super().__init__()
        self.steps = steps
        self.embed = nn.Embedding(vocab, hidden)
        self.cells = nn.ModuleList(LSTMCell(hidden, hidden)
                                   for _ in range(layers))
        self.proj = nn.Linear(hidden, vocab)

    def forward(self, tokens, targets):
        batch, hidden = tokens.shape[0], self.embed.embedding_dim
        hs = [tokens.new_zeros(batch, hidden, dtype=torch.float32)
              for _ in self.cells]
        cs = list(hs)
        loss = None
        for t in range(self.steps):
            with scope(f"t{t}"):
                x = self.embed(tokens[:, t])
                for layer, cell in enumerate(self.cells):
                    hs[layer], cs[layer] = cell(x, hs[layer], cs[layer])
                    x = hs[layer]
                step_loss = F.cross_entropy(self.proj(x), targets[:, t])
                loss = step_loss if loss is None else loss + step_loss
        return loss / self.steps
