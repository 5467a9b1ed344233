"""Scripts the models the TorchScript pipeline tests run, the way a Python user would.

usage: script_models.py OUT_DIR

Writes to OUT_DIR:
  chain.pt        embed -> blocks.0..3 -> head: a plain chain of children (pipelines)
  chain.names     its parameter names, one per line, as Python sees them
  mismatched.pt   the same, but head expects 20 features where blocks give 16
  residual.pt     forward adds a residual around the children (cannot be cut)
  two_streams.pt  split -> mix0..2 -> merge: every stage boundary carries two tensors
"""
import os
import sys

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Net(nn.Module):
    def __init__(self, head_in=16):
        super().__init__()
        self.embed = nn.Linear(12, 16)
        self.blocks = nn.Sequential(*[Block(16) for _ in range(4)])
        self.head = nn.Linear(head_in, 5)

    def forward(self, x):
        return self.head(self.blocks(self.embed(x)))


class Residual(Net):
    def forward(self, x):
        x = self.embed(x)
        return self.head(self.blocks(x) + x)


class Split(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 16)

    def forward(self, x):
        h = self.fc(x)
        return torch.relu(h), torch.tanh(h)


class Mix(nn.Module):
    """Two tensors in, two out, each output depending on both inputs."""

    def __init__(self, width):
        super().__init__()
        self.a = nn.Linear(width, width)
        self.b = nn.Linear(width, width)

    def forward(self, a, b):
        return torch.relu(self.a(a) + b), torch.tanh(self.b(b)) * a


class Merge(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.out = nn.Linear(2 * width, 5)

    def forward(self, a, b):
        return self.out(torch.cat([a, b], -1))


class TwoStreams(nn.Module):
    def __init__(self):
        super().__init__()
        self.split = Split()
        self.mix0 = Mix(16)
        self.mix1 = Mix(16)
        self.mix2 = Mix(16)
        self.merge = Merge(16)

    def forward(self, x):
        a, b = self.split(x)
        a, b = self.mix0(a, b)
        a, b = self.mix1(a, b)
        a, b = self.mix2(a, b)
        return self.merge(a, b)


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(5)
    chain = Net()
    torch.jit.save(torch.jit.script(chain), os.path.join(out_dir, "chain.pt"))
    with open(os.path.join(out_dir, "chain.names"), "w") as names:
        for name, _ in chain.named_parameters():
            names.write(name + "\n")
    torch.jit.save(torch.jit.script(Net(head_in=20)), os.path.join(out_dir, "mismatched.pt"))
    torch.jit.save(torch.jit.script(Residual()), os.path.join(out_dir, "residual.pt"))
    torch.jit.save(torch.jit.script(TwoStreams()), os.path.join(out_dir, "two_streams.pt"))


if __name__ == "__main__":
    main(sys.argv[1])
