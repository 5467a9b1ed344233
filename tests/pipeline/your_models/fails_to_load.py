"""A model file with a mistake in it: make_model() uses a name it never defined."""
import torch
from torch import nn


def make_model():
    return nn.Sequential(nn.Linear(4, 4), Activation())


def example_inputs():
    return (torch.randn(2, 4),)
