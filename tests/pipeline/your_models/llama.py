"""A Llama-style decoder as people write one: a hand-written RMSNorm, rotary position
embeddings in the Hugging Face style (cos/sin tables, rotate_half with x.chunk(2, dim=-1)),
a SwiGLU feed-forward and a ModuleList of layers run in a loop. `make_model(tie=True)`
ties the head to the token embedding (llama_tied.py)."""
import math

import torch
from torch import nn
import torch.nn.functional as F

VOCAB, CONTEXT, WIDTH, HEADS, LAYERS = 96, 16, 32, 4, 4


class RMSNorm(nn.Module):
    def __init__(self, width, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(width))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def causal_attention(q, k, v):
    t = q.size(-2)
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    future = torch.ones(t, t, dtype=torch.bool).triu(1)
    return F.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads, self.width = HEADS, WIDTH
        self.head_dim = WIDTH // HEADS
        self.wq = nn.Linear(WIDTH, WIDTH, bias=False)
        self.wk = nn.Linear(WIDTH, WIDTH, bias=False)
        self.wv = nn.Linear(WIDTH, WIDTH, bias=False)
        self.wo = nn.Linear(WIDTH, WIDTH, bias=False)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        angles = torch.outer(torch.arange(CONTEXT).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        cos, sin = self.cos[:t], self.sin[:t]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        y = causal_attention(q, k, v)
        return self.wo(y.transpose(1, 2).reshape(b, t, self.width))


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        hidden = 64
        self.w1 = nn.Linear(WIDTH, hidden, bias=False)
        self.w3 = nn.Linear(WIDTH, hidden, bias=False)
        self.w2 = nn.Linear(hidden, WIDTH, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention_norm = RMSNorm(WIDTH)
        self.attention = Attention()
        self.ffn_norm = RMSNorm(WIDTH)
        self.feed_forward = FeedForward()

    def forward(self, x):
        x = x + self.attention(self.attention_norm(x))
        return x + self.feed_forward(self.ffn_norm(x))


class Llama(nn.Module):
    def __init__(self, tie=False):
        super().__init__()
        self.tok_embeddings = nn.Embedding(VOCAB, WIDTH)
        self.layers = nn.ModuleList([Layer() for _ in range(LAYERS)])
        self.norm = RMSNorm(WIDTH)
        self.output = nn.Linear(WIDTH, VOCAB, bias=False)
        if tie:
            self.output.weight = self.tok_embeddings.weight

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.output(self.norm(h))


def make_model(tie=False):
    torch.manual_seed(0)
    return Llama(tie)


def example_inputs():
    return (torch.randint(VOCAB, (2, CONTEXT), generator=torch.Generator().manual_seed(0)),)
