"""Blocks whose forward branches on a tensor's value (a gate that skips its update when the
input is small), four of them in a ModuleList: torch.fx cannot trace any block, so baton-split
keeps every one whole — said once — and TorchScript, which follows the branch, runs them."""
import torch
from torch import nn


class GatedBlock(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.update = nn.Linear(width, width)

    def forward(self, x):
        if x.abs().mean() > 0.01:
            x = x + torch.tanh(self.update(x))
        return x


class Gated(nn.Module):
    def __init__(self, width=16, blocks=4):
        super().__init__()
        self.embed = nn.Linear(8, width)
        self.blocks = nn.ModuleList([GatedBlock(width) for _ in range(blocks)])
        self.head = nn.Linear(width, 5)

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def make_model():
    torch.manual_seed(0)
    return Gated()


def example_inputs():
    return (torch.randn(4, 8, generator=torch.Generator().manual_seed(0)),)
