"""llama_meta.py after the one edit baton-split asks for: q and k split into pairs with
unflatten(-1, (-1, 2)) instead of reshape(*x.shape[:-1], -1, 2), which TorchScript cannot
compile. Everything else — the complex frequencies kept as a plain attribute — as Meta
writes it."""
import torch

import llama_meta


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().unflatten(-1, (-1, 2)))
    xk_ = torch.view_as_complex(xk.float().unflatten(-1, (-1, 2)))
    freqs_cis = freqs_cis.view(1, xq_.shape[1], 1, xq_.shape[-1])
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


llama_meta.apply_rotary_emb = apply_rotary_emb
make_model = llama_meta.make_model
example_inputs = llama_meta.example_inputs
