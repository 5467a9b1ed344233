"""A GPT written as the popular GPT training repositories write theirs, not edited for baton:
the blocks in `self.transformer = nn.ModuleDict(dict(wte=..., wpe=..., drop=...,
h=nn.ModuleList([...]), ln_f=...))`, forward(idx, targets=None) starting with
`b, t = idx.size()` and an assert on the sequence length, the causal mask a buffer sliced by
sizes, bias-free LayerNorms (a LayerNorm class of its own), the head tied to the token
embedding, and its own loss: with targets it returns (logits, loss), a cross entropy that
ignores -1; without, the last position's logits only (the inference shortcut) and None.
4 blocks of width 128: the blocks hold almost every parameter, so a balanced cut falls
between them, inside `transformer.h`. docs/your-model.md, "A model file as it is", walks it
from baton-split to a trained run and its weights back:
    build/bin/baton-split configs/models/gpt_as_written.py --stages 2 --out stages
"""
import math

import torch
from torch import nn
import torch.nn.functional as F

VOCAB, BLOCK_SIZE, WIDTH, HEADS, LAYERS = 256, 64, 128, 4, 4  # byte tokens
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
        if T <= self.bias.size(-1):  # the mask made at __init__ covers the sequence
            mask = self.bias[:, :, :T, :T]
        else:
            mask = torch.tril(torch.ones(T, T, device=x.device)).view(1, 1, T, T)
        att = att.masked_fill(mask == 0, float("-inf"))
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

    def forward(self, idx, targets=None):
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
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])  # only the last position: generating
            loss = None
        return logits, loss


def make_model():
    torch.manual_seed(0)
    return GPT()


def example_inputs():
    """A batch of token ids and their next tokens, some -1 (not counted, as padding is)."""
    generator = torch.Generator().manual_seed(0)
    idx = torch.randint(VOCAB, (2, SEQUENCE), generator=generator)
    targets = torch.randint(VOCAB, (2, SEQUENCE), generator=generator)
    targets[0, -5:] = -1
    return idx, targets
