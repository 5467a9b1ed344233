"""Units whose parameters and compute disagree: `wide` and `narrow` hold most of the
parameters but cost one small matmul each; `mixer` holds none but mixes its input with itself
300 times. Balanced by parameters the cut is wide | narrow, mixer, head; balanced by measured
time it is wide, narrow | mixer, head: the mixer costs ~50x the rest."""
import torch
from torch import nn


class Mixer(nn.Module):
    def forward(self, x):
        for _ in range(300):
            x = torch.tanh(x @ x.transpose(0, 1) @ x) * 0.5
        return x


class HeavyUnit(nn.Module):
    def __init__(self):
        super().__init__()
        self.wide = nn.Linear(64, 64)
        self.narrow = nn.Linear(64, 64)
        self.mixer = Mixer()
        self.head = nn.Linear(64, 4)

    def forward(self, x):
        return self.head(self.mixer(self.narrow(torch.relu(self.wide(x)))))


def make_model():
    torch.manual_seed(0)
    return HeavyUnit()


def example_inputs():
    return (torch.randn(32, 64, generator=torch.Generator().manual_seed(0)) * 0.1,)
