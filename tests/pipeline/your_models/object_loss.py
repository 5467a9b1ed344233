"""dict_loss.py's model returning an object with fields (a dataclass, as Hugging Face's
ModelOutput classes are) and taking its targets under a name of its own, `y`: split with
--targets-arg y, the last stage returns the object's .loss."""
from dataclasses import dataclass
from typing import Optional

import torch

from dict_loss import ForCausalLM, example_inputs  # noqa: F401 (example_inputs: baton-split's)


@dataclass
class CausalLMOutput:
    loss: Optional[torch.Tensor] = None
    logits: Optional[torch.Tensor] = None


class ObjectOutputLM(ForCausalLM):
    def forward(self, input_ids, y=None):
        out = super().forward(input_ids, y)
        return CausalLMOutput(loss=out["loss"], logits=out["logits"])


def make_model():
    torch.manual_seed(0)
    return ObjectOutputLM()
