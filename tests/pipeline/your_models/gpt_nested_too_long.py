"""gpt_nested.py with example inputs longer than its block size: the model's own assert fails
on them, which baton-split reports as the author's error, at the author's line."""
import torch

from gpt_nested import BLOCK_SIZE, VOCAB, make_model  # noqa: F401 (make_model: baton-split's)


def example_inputs():
    return (torch.randint(VOCAB, (2, BLOCK_SIZE + 16)),)
