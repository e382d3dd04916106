"""The model's class, in a sibling module: trained through its own log_probs method, which runs
the forward and turns its output into a log-likelihood."""
import math

import torch
import torch.nn as nn


class FlowSequential(nn.Sequential):
    def forward(self, x):
        log_jacob = torch.zeros(x.size(0), 1)
        for layer in self:
            x = layer(x)
        return x, log_jacob

    def log_probs(self, x):
        u, log_jacob = self(x)
        log_probs = (-0.5 * u.pow(2) - 0.5 * math.log(2 * math.pi)).sum(-1, keepdim=True)
        return (log_probs + log_jacob).sum(-1, keepdim=True)
