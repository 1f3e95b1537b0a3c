#!/usr/bin/python3
"""The charlm example's reference (docs/Linking.md, "The charlm example"):
the model of charlm.json, tofu-export's GPT (tools/tofu-export/tofu_export/
zoo/gpt.py), trained in PyTorch eager with torch.optim.Adam on the batches
charlm-train trains on, so that its losses can be compared with the linked
plan's.

    reference.py [--text FILE] [--steps N] [--init FILE.npz]
                 [--save-init FILE.npz] [--losses FILE]

The model's sizes (layers, width, heads, context, vocabulary, batch) and
Adam's options (lr, betas, eps, weight decay) are read from the graph,
examples/charlm/charlm.json. Without --init the parameters are PyTorch's
default initialisation after torch.manual_seed(0); --save-init writes them
(the state_dict, attention masks included, keyed by the graph's names) as an
uncompressed .npz before the first step, which `charlm-train --init` reads.

Batches: step s (from 1) trains on B rows; row r's tokens are the SEQ bytes
of the text at offset splitmix64(s * 2^32 + r) mod (len(text) - SEQ), its
targets the SEQ bytes one further on. charlm-train's CharLM.cpp is the same
rule. Exit status: 0 done, 1 bad input.

charlm.json was exported from the repository root with

    build/bin/tofu-export gpt:2:128:4:64 --batch 8 --vocab 256 \
        --optimizer adam --lr 3e-3 -o examples/charlm/charlm.json
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPH = os.path.join(HERE, "charlm.json")
DEFAULT_TEXT = "/usr/share/common-licenses/GPL-3"
MASK64 = (1 << 64) - 1


def splitmix64(x):
    """Steele, Lea and Flood's SplitMix64 finaliser of x + the golden gamma
    (CharLM.cpp has the same function)."""
    z = (x + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def batch_offsets(step, rows, text_len, seq):
    """Where each row of step `step`'s batch starts in the text."""
    return [splitmix64((step << 32) | r) % (text_len - seq)
            for r in range(rows)]


def read_graph():
    """The model's constructor arguments, the batch and Adam's options."""
    with open(GRAPH) as f:
        graph = json.load(f)
    meta = graph["metadata"]
    kind, layers, hidden, heads, seq = meta["model"].split(":")
    assert kind == "gpt", meta["model"]
    shapes = {t["name"]: t["shape"] for t in graph["tensors"]}
    vocab = shapes["embed.weight"][0]
    sizes = dict(layers=int(layers), hidden=int(hidden), heads=int(heads),
                 seq=int(seq), vocab=vocab)
    return sizes, meta["batch"], meta["optimizer_options"], shapes


def fail(message):
    print(f"reference.py: error: {message}", file=sys.stderr)
    sys.exit(1)


def load_init(model, path, shapes):
    """Sets `model`'s state_dict from the archive at `path`; Adam's state in
    it, if any, must be zero (reference.py starts Adam afresh)."""
    import numpy as np
    import torch
    try:
        archive = np.load(path)
    except (OSError, ValueError) as e:
        fail(f"--init {path}: {e}")
    state = model.state_dict()
    values = {}
    for name in archive.files:
        array = archive[name]
        if name not in state:
            if name in shapes and not array.any():
                continue  # zero optimizer state: what Adam starts from
            fail(f"--init {path}: '{name}' is not a tensor of the model")
        if list(array.shape) != list(state[name].shape):
            fail(f"--init {path}: '{name}' has shape {list(array.shape)}, "
                 f"the model's is {list(state[name].shape)}")
        values[name] = torch.from_numpy(array.astype(np.float32))
    missing = sorted(set(state) - set(values))
    if missing:
        fail(f"--init {path}: no array '{missing[0]}'")
    model.load_state_dict(values)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--text", default=DEFAULT_TEXT)
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--init", metavar="FILE.npz")
    parser.add_argument("--save-init", metavar="FILE.npz")
    parser.add_argument("--losses", metavar="FILE")
    args = parser.parse_args()
    if args.steps < 0:
        fail("--steps must not be negative")

    sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "tofu-export"))
    import numpy as np
    import torch
    from tofu_export.zoo.gpt import GPT

    sizes, batch, adam, shapes = read_graph()
    seq = sizes["seq"]
    try:
        with open(args.text, "rb") as f:
            text = f.read()
    except OSError as e:
        fail(f"--text {args.text}: {e.strerror}")
    if len(text) < seq + 1:
        fail(f"--text {args.text}: {len(text)} bytes, need at least {seq + 1}")

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = GPT(**sizes)
    if args.init:
        load_init(model, args.init, shapes)
    if args.save_init:
        np.savez(args.save_init, **{name: value.numpy() for name, value
                                    in model.state_dict().items()})
    optimizer = torch.optim.Adam(model.parameters(), lr=adam["lr"],
                                 betas=tuple(adam["betas"]), eps=adam["eps"],
                                 weight_decay=adam["weight_decay"])
    data = torch.tensor(list(text), dtype=torch.int64)
    lines = []
    for step in range(1, args.steps + 1):
        offsets = batch_offsets(step, batch, len(text), seq)
        tokens = torch.stack([data[o:o + seq] for o in offsets])
        targets = torch.stack([data[o + 1:o + seq + 1] for o in offsets])
        optimizer.zero_grad()
        loss = model(tokens, targets)
        loss.backward()
        optimizer.step()
        lines.append(f"{step} {loss.item():#.9g}\n")
        print(f"step {step}: loss {loss.item():.6f}")
    if args.losses:
        with open(args.losses, "w") as f:
            f.writelines(lines)


if __name__ == "__main__":
    main()
