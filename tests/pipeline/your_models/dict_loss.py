"""A model in the style of Hugging Face's: forward(input_ids, labels=None) returns a dict with
"loss" (a cross entropy that skips -100, PyTorch's default) and "logits". Split with labels it
trains on its own loss; its blocks are a ModuleList inside a plain submodule (`model.layers`).
"""
import torch
from torch import nn
import torch.nn.functional as F

VOCAB, WIDTH, LAYERS, CONTEXT = 48, 32, 4, 12


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(WIDTH)
        self.up = nn.Linear(WIDTH, 2 * WIDTH)
        self.down = nn.Linear(2 * WIDTH, WIDTH)

    def forward(self, x):
        return x + self.down(torch.tanh(self.up(self.norm(x))))


class Body(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, WIDTH)
        self.layers = nn.ModuleList([Layer() for _ in range(LAYERS)])
        self.norm = nn.LayerNorm(WIDTH)

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class ForCausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = Body()
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, input_ids, labels=None):
        logits = self.lm_head(self.model(input_ids))
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.reshape(-1, VOCAB), labels.reshape(-1))
        return {"loss": loss, "logits": logits}


def make_model():
    torch.manual_seed(0)
    return ForCausalLM()


def example_inputs():
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(VOCAB, (2, CONTEXT), generator=generator)
    labels = torch.randint(VOCAB, (2, CONTEXT), generator=generator)
    labels[1, :4] = -100
    return ids, labels
