"""Token ids and an attention mask of int64 0/1 (as tokenizers return it): the model.yaml
baton-split writes bounds the ids by the vocabulary and the mask by 2, not by the vocabulary."""
import torch
from torch import nn


class Masked(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(50, 8)
        self.head = nn.Linear(8, 50)

    def forward(self, ids, mask):
        return self.head(self.embed(ids) * mask.unsqueeze(-1).to(torch.float32))


def make_model():
    torch.manual_seed(0)
    return Masked()


def example_inputs():
    generator = torch.Generator().manual_seed(0)
    return (torch.randint(50, (2, 6), generator=generator),
            torch.randint(2, (2, 6), generator=generator))
