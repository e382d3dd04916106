"""Builds the loaders into an attribute dict and hands them to the solver of a sibling module."""

import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset

from nets import AttrDict
from solver import Solver


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--mode", default="train")
    args = parser.parse_args()
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
    loaders = AttrDict(train=DataLoader(data, batch_size=8, shuffle=True, drop_last=True))
    solver = Solver(args)
    solver.train(loaders)


if __name__ == "__main__":
    main()
