"""configs/models/gpt_as_written.py with example inputs longer than its block size: the
model's own assert fails on them, which baton-split reports as the author's error, at the
author's line."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "configs", "models"))
from gpt_as_written import BLOCK_SIZE, VOCAB, make_model  # noqa: E402,F401 (make_model: baton-split's)


def example_inputs():
    return (torch.randint(VOCAB, (2, BLOCK_SIZE + 16)),)
