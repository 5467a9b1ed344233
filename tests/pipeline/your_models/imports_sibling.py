"""A model whose blocks come from a sibling file (blocks.py): baton-split finds it beside
this one, without PYTHONPATH."""
import torch
from torch import nn

from blocks import Block


class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([Block(8) for _ in range(4)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def make_model():
    torch.manual_seed(0)
    return Stack()


def example_inputs():
    return (torch.randn(2, 8, generator=torch.Generator().manual_seed(0)),)
