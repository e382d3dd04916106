"""The networks come from a helper as attribute dicts (stargan-v2's ``build_model``): trained
nets, EMA copies that are never trained, and a frozen net no optimizer steps."""

import copy

import torch.nn as nn


class AttrDict(dict):
    """``nets.generator`` and ``nets["generator"]`` alike (a Munch)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError as error:
            raise AttributeError(name) from error


def build_nets(args):
    generator = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
    discriminator = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
    frozen = nn.Linear(4, 4)
    nets = AttrDict(generator=generator, discriminator=discriminator, frozen=frozen)
    nets_ema = AttrDict(generator=copy.deepcopy(generator))
    return nets, nets_ema
