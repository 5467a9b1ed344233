"""The head reuses the embedding's weight (tied weights, as GPT-2 does)."""
import torch
from torch import nn


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(32, 16)
        self.mid = nn.Linear(16, 16)
        self.lm_head = nn.Linear(16, 32, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, ids):
        return self.lm_head(torch.relu(self.mid(self.wte(ids))))


def make_model():
    return Tied()


def example_inputs():
    return (torch.randint(32, (2, 8)),)
