"""Model code of a project, next to its training script: a stack of gated layers that each
return two streams, of which the stack keeps only the horizontal one after its last layer (a
PixelCNN's vertical stack): the last layer's vertical normalisation gets no gradient."""
import torch
import torch.nn as nn


class GatedLayer(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.v = nn.Linear(width, width)
        self.h = nn.Linear(width, width)
        self.norm_v = nn.LayerNorm(width)

    def forward(self, x_v, x_h):
        v = torch.tanh(self.v(x_v))
        return self.norm_v(v), torch.relu(self.h(x_h) + v)


class GatedStack(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.layers = nn.ModuleList([GatedLayer(width) for _ in range(depth)])
        self.out = nn.Linear(width, 3)

    def forward(self, x):
        x_v, x_h = x, x
        for layer in self.layers:
            x_v, x_h = layer(x_v, x_h)
        return self.out(x_h)
