"""A two-input language model for baton-split: forward(ids, mask), the mask (bool, one per
token) used by every block, so it crosses every cut next to the activations."""
import torch
from torch import nn

VOCAB, CONTEXT, WIDTH = 64, 16, 32


class MaskedBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(WIDTH)
        self.fc = nn.Linear(WIDTH, WIDTH)

    def forward(self, x, mask):
        update = torch.tanh(self.fc(self.norm(x)))
        return x + update * mask.unsqueeze(-1).to(x.dtype)


class MaskedLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, WIDTH)
        self.pos = nn.Parameter(torch.randn(CONTEXT, WIDTH) * 0.02)
        self.blocks = nn.ModuleList([MaskedBlock() for _ in range(4)])
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, ids, mask):
        x = self.tok(ids) + self.pos[: ids.size(1)]
        for block in self.blocks:
            x = block(x, mask)
        return self.head(x)


def make_model():
    torch.manual_seed(1)
    return MaskedLM()


def example_inputs():
    generator = torch.Generator().manual_seed(1)
    return (torch.randint(VOCAB, (2, CONTEXT), generator=generator),
            torch.randint(2, (2, CONTEXT), generator=generator).bool())
