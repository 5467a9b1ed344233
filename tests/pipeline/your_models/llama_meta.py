"""llama.py's model with Meta's rotary embeddings: complex frequencies from torch.polar kept
as a plain tensor attribute (not a buffer), applied by viewing q and k as complex numbers
with reshape(*x.shape[:-1], -1, 2), as Meta's reference code does."""
import torch
from torch import nn
import torch.nn.functional as F

import llama
from llama import VOCAB, CONTEXT, WIDTH, HEADS


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.heads, self.width = HEADS, WIDTH
        self.head_dim = WIDTH // HEADS
        self.wq = nn.Linear(WIDTH, WIDTH, bias=False)
        self.wk = nn.Linear(WIDTH, WIDTH, bias=False)
        self.wv = nn.Linear(WIDTH, WIDTH, bias=False)
        self.wo = nn.Linear(WIDTH, WIDTH, bias=False)
        self.freqs_cis = precompute_freqs_cis(self.head_dim, CONTEXT)  # a plain attribute

    def forward(self, x):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, self.heads, self.head_dim)
        xk = self.wk(x).view(bsz, seqlen, self.heads, self.head_dim)
        xv = self.wv(x).view(bsz, seqlen, self.heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, self.freqs_cis[:seqlen])
        y = llama.causal_attention(xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2))
        return self.wo(y.transpose(1, 2).reshape(bsz, seqlen, self.width))


def make_model():
    model = llama.make_model()
    torch.manual_seed(1)
    for layer in model.layers:
        layer.attention = Attention()
    return model


def example_inputs():
    return llama.example_inputs()
