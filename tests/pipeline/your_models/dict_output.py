"""A model that returns a dict holding a number beside its logits (as some Hugging Face
models do): a pipeline's stages pass tensors only, so baton-split has the stages return the
logits, and says so (issue 48: it split, rc 0, and baton refused the files later)."""
import torch
from torch import nn


class DictOutput(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(4, 4)
        self.l2 = nn.Linear(4, 2)

    def forward(self, x):
        return {"logits": self.l2(torch.relu(self.l1(x))), "n": 3}


def make_model():
    torch.manual_seed(0)
    return DictOutput()


def example_inputs():
    return (torch.randn(2, 4, generator=torch.Generator().manual_seed(0)),)
