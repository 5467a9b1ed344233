"""A small GPT-style language model written the usual way (nanoGPT's shape): token and
position embeddings summed in forward(), a ModuleList of blocks run in a loop, a final
LayerNorm and a head. baton-split cuts it into stage files (docs/your-model.md):

    baton-split configs/models/nanogpt.py --stages 2 --out configs/models/nanogpt-2

make_model() and example_inputs() are what baton-split reads. The weights are seeded, so
every split of this file starts from the same model.
"""
import math

import torch
from torch import nn
import torch.nn.functional as F

VOCAB = 256  # bytes: data.source text trains it on any file
CONTEXT = 32
WIDTH = 64
HEADS = 4
LAYERS = 4


class CausalSelfAttention(nn.Module):
    def __init__(self, width, heads, context):
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(width, 3 * width)
        self.c_proj = nn.Linear(width, width)
        self.scale = 1.0 / math.sqrt(width // heads)
        # Persistent: it is in the state dict, so baton's export carries it too.
        self.register_buffer("bias", torch.tril(torch.ones(context, context))
                             .view(1, 1, context, context))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(c, dim=2)
        q = q.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        k = k.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        v = v.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * self.scale
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        y = F.softmax(att, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))


class MLP(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.c_fc = nn.Linear(width, 4 * width)
        self.c_proj = nn.Linear(4 * width, width)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, width, heads, context):
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = CausalSelfAttention(width, heads, context)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = MLP(width)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab=VOCAB, context=CONTEXT, width=WIDTH, heads=HEADS, layers=LAYERS,
                 tie=False):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(context, width)
        self.h = nn.ModuleList([Block(width, heads, context) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)
        if tie:  # nanoGPT's weight tying (nanogpt_tied.py)
            self.wte.weight = self.lm_head.weight

    def forward(self, idx):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def make_model():
    torch.manual_seed(0)
    return GPT()


def example_inputs():
    return (torch.randint(VOCAB, (2, CONTEXT), generator=torch.Generator().manual_seed(0)),)
