"""A GPT-2-style model as Hugging Face writes one: forward(input_ids, attention_mask), learned
position embeddings, dropout after the embeddings, on the attention weights and on each
residual branch, padding keys masked out. Its dropout masks must depend on the run's seed,
the step, the stage and the microbatch alone, so the same split trains the same on any
schedule and placement."""
import math

import torch
from torch import nn
import torch.nn.functional as F

VOCAB, CONTEXT, WIDTH, HEADS, LAYERS, DROPOUT = 96, 16, 32, 4, 4, 0.1


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(WIDTH, 3 * WIDTH)
        self.proj = nn.Linear(WIDTH, WIDTH)
        self.attn_drop = nn.Dropout(DROPOUT)
        self.resid_drop = nn.Dropout(DROPOUT)
        self.register_buffer("causal", torch.tril(torch.ones(CONTEXT, CONTEXT, dtype=torch.bool)),
                             persistent=False)

    def forward(self, x, mask):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q = q.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        k = k.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        v = v.view(b, t, HEADS, c // HEADS).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(c // HEADS)
        allowed = self.causal[:t, :t].view(1, 1, t, t) & (mask.view(b, 1, 1, t) > 0)
        # A padded row still attends to itself, so no row of the softmax is all -inf.
        allowed = allowed | torch.eye(t, dtype=torch.bool).view(1, 1, t, t)
        weights = self.attn_drop(F.softmax(scores.masked_fill(~allowed, -1e9), dim=-1))
        y = (weights @ v).transpose(1, 2).reshape(b, t, c)
        return self.resid_drop(self.proj(y))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(WIDTH)
        self.attn = Attention()
        self.ln_2 = nn.LayerNorm(WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, 4 * WIDTH), nn.GELU(),
                                 nn.Linear(4 * WIDTH, WIDTH), nn.Dropout(DROPOUT))

    def forward(self, x, mask):
        x = x + self.attn(self.ln_1(x), mask)
        return x + self.mlp(self.ln_2(x))


class Gpt2(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, WIDTH)
        self.wpe = nn.Embedding(CONTEXT, WIDTH)
        self.drop = nn.Dropout(DROPOUT)
        self.h = nn.ModuleList([Block() for _ in range(LAYERS)])
        self.ln_f = nn.LayerNorm(WIDTH)
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, input_ids, attention_mask):
        t = input_ids.size(1)
        x = self.drop(self.wte(input_ids) + self.wpe(torch.arange(t)))
        for block in self.h:
            x = block(x, attention_mask)
        return self.lm_head(self.ln_f(x))


def make_model():
    torch.manual_seed(0)
    return Gpt2()


def example_inputs():
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(VOCAB, (2, CONTEXT), generator=generator)
    mask = torch.ones(2, CONTEXT, dtype=torch.int64)
    mask[1, CONTEXT - 4:] = 0  # right padding, as a tokenizer pads a shorter text
    return ids, mask
