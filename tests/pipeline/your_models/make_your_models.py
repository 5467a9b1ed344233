"""Writes what tests/pipeline/your_model_test.cc trains, the way a Python user would.

usage: make_your_models.py OUT_DIR

  token_lm.pt          a token-input language model scripted as one file: an nn.Sequential
                       of an embedding (token + position), blocks with residuals inside,
                       a norm and a head
  hand-0.pt, hand-1.pt stage modules written by hand: stage 0 returns a tuple (h, gate),
                       stage 1 takes both; hand-0.pt carries a name map, hand-1.pt none
  hand-1-wide.pt       a stage 1 that expects 24 features where stage 0 gives 16
  hand.py              make_model() for the reference: the two hand stages as one module
  ids.npy, mask.npy, targets.npy     data for masked_lm.py (int64, bool, int64 [48, 16])
  targets-flat.npy     targets of the wrong shape ([48])
  targets-high.npy     class ids up to 99 for a model with 64 classes
  targets-float.npy    float targets for cross entropy
  targets-padded.npy   targets.npy with its last 3 positions -100 (padding)
  smoothed_token_loss.pt   a scripted token loss over class ids (label smoothing, -100 skipped)
  value_loss.pt        a scripted loss over values shaped like the output
"""
import json
import os
import sys

import numpy as np
import torch
from torch import nn


class TokenEmbedding(nn.Module):
    def __init__(self, vocab, context, width):
        super().__init__()
        self.tok = nn.Embedding(vocab, width)
        self.pos = nn.Parameter(torch.randn(context, width) * 0.02)

    def forward(self, ids):
        return self.tok(ids) + self.pos[: ids.size(1)]


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width)
        self.proj = nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.proj(torch.relu(self.fc(self.norm(x))))


def token_lm():
    torch.manual_seed(2)
    return nn.Sequential(TokenEmbedding(256, 16, 32), Block(32), Block(32), Block(32), Block(32),
                         nn.LayerNorm(32), nn.Linear(32, 256))


class HandStage0(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(12, 16)
        self.gate = nn.Linear(12, 16)

    def forward(self, x):
        return torch.relu(self.inp(x)), torch.sigmoid(self.gate(x))


class HandStage1(nn.Module):
    def __init__(self, width=16):
        super().__init__()
        self.mix = nn.Linear(width, 16)
        self.out = nn.Linear(16, 5)

    def forward(self, h, gate):
        return self.out(torch.tanh(self.mix(h)) * gate)


class SmoothedTokenLoss(nn.Module):
    """A token loss of the user's own over class ids: label smoothing, padding -100 skipped."""

    def forward(self, output, targets):
        return nn.functional.cross_entropy(output.reshape(-1, output.size(-1)),
                                           targets.reshape(-1), ignore_index=-100,
                                           label_smoothing=0.1)


class ValueLoss(nn.Module):
    """A loss over values shaped like the output: given class ids, it fails."""

    def forward(self, output, targets):
        return ((output - targets) ** 2).mean()


HAND_MAP = {"parameters": {"inp.weight": "encoder.inp.weight", "inp.bias": "encoder.inp.bias",
                           "gate.weight": "encoder.gate.weight",
                           "gate.bias": "encoder.gate.bias"}}


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    torch.jit.save(torch.jit.script(token_lm()), os.path.join(out_dir, "token_lm.pt"))

    torch.manual_seed(3)
    torch.jit.save(torch.jit.script(HandStage0()), os.path.join(out_dir, "hand-0.pt"),
                   _extra_files={"baton/names.json": json.dumps(HAND_MAP)})
    torch.jit.save(torch.jit.script(HandStage1()), os.path.join(out_dir, "hand-1.pt"))
    torch.jit.save(torch.jit.script(HandStage1(width=24)),
                   os.path.join(out_dir, "hand-1-wide.pt"))

    generator = torch.Generator().manual_seed(4)
    rows, context, vocab = 48, 16, 64
    ids = torch.randint(vocab, (rows, context), generator=generator)
    mask = torch.randint(2, (rows, context), generator=generator).bool()
    targets = torch.randint(vocab, (rows, context), generator=generator)
    np.save(os.path.join(out_dir, "ids.npy"), ids.numpy())
    np.save(os.path.join(out_dir, "mask.npy"), mask.numpy())
    np.save(os.path.join(out_dir, "targets.npy"), targets.numpy())
    np.save(os.path.join(out_dir, "targets-flat.npy"), targets[:, 0].numpy())
    high = targets.clone()
    high[5, 3] = 99
    np.save(os.path.join(out_dir, "targets-high.npy"), high.numpy())
    np.save(os.path.join(out_dir, "targets-float.npy"), targets.float().numpy())
    padded = targets.clone()
    padded[:, context - 3:] = -100  # the last positions are padding
    np.save(os.path.join(out_dir, "targets-padded.npy"), padded.numpy())
    torch.jit.save(torch.jit.script(SmoothedTokenLoss()),
                   os.path.join(out_dir, "smoothed_token_loss.pt"))
    torch.jit.save(torch.jit.script(ValueLoss()), os.path.join(out_dir, "value_loss.pt"))


if __name__ == "__main__":
    main(sys.argv[1])
