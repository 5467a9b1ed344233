"""A small ResNet-style image classifier with BatchNorm, written the usual way: a stem, a
ModuleList of residual blocks (conv, BatchNorm, ReLU, conv, BatchNorm, the skip added inside
the block), pooling and a linear head. Its running statistics are buffers training updates:
set-up must leave them as make_model() made them, and training must update them once per
microbatch, as gradient accumulation over the same microbatches does in PyTorch."""
import torch
from torch import nn
import torch.nn.functional as F

CLASSES = 10


class Residual(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(y)))


class SmallResNet(nn.Module):
    def __init__(self, channels=8, blocks=4):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(channels), nn.ReLU())
        self.blocks = nn.ModuleList([Residual(channels) for _ in range(blocks)])
        self.head = nn.Linear(channels, CLASSES)

    def forward(self, images):
        x = self.stem(images)
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(dim=(2, 3)))


def make_model():
    torch.manual_seed(0)
    return SmallResNet()


def example_inputs():
    return (torch.randn(4, 3, 8, 8, generator=torch.Generator().manual_seed(0)),)
