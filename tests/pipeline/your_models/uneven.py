"""Units of very different sizes (20, 20, 160 and 33 parameters): the split whose largest
stage is smallest puts l3 with l4 (40 | 193), not with l1 and l2 (200 | 33)."""
import torch
from torch import nn


class Uneven(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(4, 4)
        self.l2 = nn.Linear(4, 4)
        self.l3 = nn.Linear(4, 32)
        self.l4 = nn.Linear(32, 1)

    def forward(self, x):
        return self.l4(torch.relu(self.l3(torch.relu(self.l2(torch.relu(self.l1(x)))))))


def make_model():
    torch.manual_seed(0)
    return Uneven()


def example_inputs():
    return (torch.randn(2, 4, generator=torch.Generator().manual_seed(0)),)
