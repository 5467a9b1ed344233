"""Writes tiny_mlp.pt, the TorchScript model configs/torchscript-gloo.yaml trains.

A Python user brings a model the same way: script it, save it, name it in the YAML.
    python3 configs/models/make_tiny_mlp.py configs/models/tiny_mlp.pt
"""
import sys

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.fc(x))


class TinyMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(32, 64)
        self.blocks = nn.Sequential(*[Block(64) for _ in range(4)])
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        return self.head(self.blocks(self.embed(x)))


if __name__ == "__main__":
    torch.manual_seed(0)
    torch.jit.save(torch.jit.script(TinyMlp()), sys.argv[1])
