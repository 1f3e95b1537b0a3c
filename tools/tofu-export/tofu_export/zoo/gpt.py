"""This file implements a GPT-style decoder: token and learned positional
embeddings, `layers` pre-layernorm blocks (causal multi-head self-attention
with softmax, then a GELU MLP of width 4 * hidden, each with a residual), a
final layernorm, and a vocabulary projection scored with softmax
cross-entropy against the next tokens. With `dropout` p > 0 (tofu-export
`--model-kwargs '{"dropout": P}'`) it drops out as nanoGPT does: the
embeddings' sum, the attention probabilities, and each residual branch
before it is added; at p = 0 (the default) there are no dropout modules and
the graph is as before.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _dropout(p: float) -> nn.Module:
    """nn.Dropout(p), or for p = 0 a module that records no op."""
    return nn.Dropout(p) if p else nn.Identity()


class Attention(nn.Module):
    """Causal multi-head self-attention with separate q, k, v projections."""

    def __init__(self, hidden: int, heads: int, seq: int, dropout=0.0):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)
        mask = torch.full((seq, seq), float("-inf")).triu(1)
        self.register_buffer("mask", mask)
        self.attn_drop = _dropout(dropout)
        self.resid_drop = _dropout(dropout)

    def _split(self, x):
        b, s, h = x.shape
        return x.view(b, s, self.heads, h // self.heads).transpose(1, 2)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self._split(self.q(x)), self._split(self.k(x)), \
            self._split(self.v(x))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(
            h // self.heads)
        probs = self.attn_drop(torch.softmax(scores + self.mask, dim=-1))
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, h)
        return self.resid_drop(self.out(ctx))


class Block(nn.Module):
    """x + attn(ln1(x)), then x + mlp(ln2(x))."""

    def __init__(self, hidden: int, heads: int, seq: int, dropout=0.0):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden)
        self.attn = Attention(hidden, heads, seq, dropout)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc1 = nn.Linear(hidden, 4 * hidden)
        self.fc2 = nn.Linear(4 * hidden, hidden)
        self.drop = _dropout(dropout)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.drop(self.fc2(F.gelu(self.fc1(self.ln2(x)))))


class GPT(nn.Module):
    """forward(tokens[B, seq] i64, targets[B, seq] i64) -> loss"""

    def __init__(self, layers: int, hidden: int, heads: int, seq: int,
                 vocab: int, dropout: float = 0.0):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.pos = nn.Parameter(torch.empty(seq, hidden))
        nn.init.normal_(self.pos, std=0.02)
        self.drop = _dropout(dropout)
        self.blocks = nn.ModuleList(Block(hidden, heads, seq, dropout)
                                    for _ in range(layers))
        self.ln = nn.LayerNorm(hidden)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens, targets):
        x = self.drop(self.embed(tokens) + self.pos)
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.view(-1, logits.shape[-1]),
                               targets.view(-1))
