"""forward() branches on a tensor's value: torch.fx cannot trace it."""
import torch
from torch import nn


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        x = self.a(x)
        if x.sum() > 0:
            x = -x
        return self.b(x)


def make_model():
    return Branchy()


def example_inputs():
    return (torch.randn(2, 8),)
