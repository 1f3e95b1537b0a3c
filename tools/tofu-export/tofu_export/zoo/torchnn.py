"""This file implements the `torch:KIND:...` models: PyTorch's own sequence
modules, each wrapped so that it maps one input [batch, steps, width] to one
output of the same shape (scored with a mean squared error):

  torch:rnn:L:H, torch:lstm:L:H, torch:gru:L:H
      nn.RNN / nn.LSTM / nn.GRU with L layers of width H (batch_first);
      the output sequence of the last layer
  torch:mha:E:HEADS
      nn.MultiheadAttention self-attention of width E
  torch:encoder:L:E:HEADS, torch:decoder:L:E:HEADS
      nn.TransformerEncoder / nn.TransformerDecoder of L layers of width E
      (feed-forward 4E, dropout 0.1); the decoder attends to its own input
      as memory
"""

import torch.nn as nn

RECURRENT = {"rnn": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}

# KIND -> how many ':'-separated numbers follow it.
ARITY = {"rnn": 2, "lstm": 2, "gru": 2, "mha": 2, "encoder": 3, "decoder": 3}


class Recurrent(nn.Module):
    """An nn.RNN, nn.LSTM or nn.GRU; returns the output sequence."""

    def __init__(self, kind: str, layers: int, hidden: int):
        super().__init__()
        self.rnn = RECURRENT[kind](hidden, hidden, layers, batch_first=True)

    def forward(self, x):
        return self.rnn(x)[0]


class SelfAttention(nn.Module):
    """nn.MultiheadAttention with queries, keys and values all `x`."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0]


class Encoder(nn.Module):
    """nn.TransformerEncoder of post-layernorm layers."""

    def __init__(self, layers: int, width: int, heads: int):
        super().__init__()
        layer = nn.TransformerEncoderLayer(width, heads, 4 * width,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers,
                                             enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


class Decoder(nn.Module):
    """nn.TransformerDecoder attending to its own input as memory."""

    def __init__(self, layers: int, width: int, heads: int):
        super().__init__()
        layer = nn.TransformerDecoderLayer(width, heads, 4 * width,
                                           batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, layers)

    def forward(self, x):
        return self.decoder(x, x)


def build(kind: str, numbers):
    """The module of `torch:KIND:numbers` and its width."""
    if kind in RECURRENT:
        return Recurrent(kind, *numbers), numbers[1]
    if kind == "mha":
        return SelfAttention(*numbers), numbers[0]
    cls = Encoder if kind == "encoder" else Decoder
    return cls(*numbers), numbers[1]
