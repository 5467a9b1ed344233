"""A GPT written as the popular GPT training repositories write theirs, unedited for baton:
the blocks in `self.transformer = nn.ModuleDict(dict(wte=..., wpe=..., drop=...,
h=nn.ModuleList([...]), ln_f=...))`, forward starting with `b, t = idx.size()` and an assert on
the sequence length, the causal mask a buffer sliced by sizes, a branch on a size, bias-free
LayerNorms (a LayerNorm class of its own) and the head tied to the token embedding.
4 blocks of width 128: the blocks hold almost every parameter, so a balanced cut must fall
between them, inside `transformer.h`."""
import math

import torch
from torch import nn
import torch.nn.functional as F

VOCAB, BLOCK_SIZE, WIDTH, HEADS, LAYERS = 65, 64, 128, 4, 4
SEQUENCE = 32  # the example's and the run's: shorter than the block size


class LayerNorm(nn.Module):
    """LayerNorm with an optional bias (PyTorch's has none to switch off)."""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(WIDTH, 3 * WIDTH, bias=False)
        self.c_proj = nn.Linear(WIDTH, WIDTH, bias=False)
        self.n_head = HEADS
        self.n_embd = WIDTH
        self.register_buffer("bias", torch.tril(torch.ones(BLOCK_SIZE, BLOCK_SIZE))
                             .view(1, 1, BLOCK_SIZE, BLOCK_SIZE))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = nn.Linear(WIDTH, 4 * WIDTH, bias=False)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * WIDTH, WIDTH, bias=False)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = LayerNorm(WIDTH, bias=False)
        self.attn = CausalSelfAttention()
        self.ln_2 = LayerNorm(WIDTH, bias=False)
        self.mlp = MLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.block_size = BLOCK_SIZE
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(VOCAB, WIDTH),
            wpe=nn.Embedding(BLOCK_SIZE, WIDTH),
            drop=nn.Dropout(0.0),
            h=nn.ModuleList([Block() for _ in range(LAYERS)]),
            ln_f=LayerNorm(WIDTH, bias=False),
        ))
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)
        self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx):
        device = idx.device
        b, t = idx.size()
        assert t <= self.block_size, f"Cannot forward sequence of length {t}, block size is only {self.block_size}"
        pos = torch.arange(0, t, dtype=torch.long, device=device)
        tok_emb = self.transformer.wte(idx)
        pos_emb = self.transformer.wpe(pos)
        x = self.transformer.drop(tok_emb + pos_emb)
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if t > 1:  # a branch on a size, as models with caches have
            x = x * 1.0
        return self.lm_head(x)


def make_model():
    torch.manual_seed(0)
    return GPT()


def example_inputs():
    generator = torch.Generator().manual_seed(0)
    return (torch.randint(VOCAB, (2, SEQUENCE), generator=generator),)
