# nanoGPT with its output head tied to the token embedding, as nanoGPT and GPT-2 train it
# (`self.transformer.wte.weight = self.lm_head.weight`): one tensor under two names, which
# baton-split records and baton keeps one tensor (configs/nanogpt-recipe.yaml). The model is
# nanogpt.py's; this file imports it from beside itself.
#   build/bin/baton-split configs/models/nanogpt_tied.py --stages 2 --out configs/models/nanogpt-tied-2
import torch

from nanogpt import GPT, example_inputs  # noqa: F401 (example_inputs: baton-split's)


def make_model():
    torch.manual_seed(0)
    return GPT(tie=True)
