"""configs/models/gpt_as_written.py split without targets: its forward then returns the last
position's logits beside a None, which the stages return, and baton-split says so (and that
giving the targets would train on the model's own loss)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "configs", "models"))
from gpt_as_written import SEQUENCE, VOCAB, make_model  # noqa: E402,F401 (make_model: baton-split's)


def example_inputs():
    return (torch.randint(VOCAB, (2, SEQUENCE), generator=torch.Generator().manual_seed(0)),)
