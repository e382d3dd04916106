"""Picks the algorithm class by name, moves it, and feeds it minibatches from two loaders."""

import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset

import algorithms


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--algorithm", default="ERM")
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args()
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    algorithm_class = vars(algorithms)[args.algorithm]
    algorithm = algorithm_class(3, {"lr": 1e-2})
    algorithm.to(device)
    loaders = [DataLoader(TensorDataset(torch.randn(64, 4), torch.randint(0, 3, (64,))), batch_size=8, shuffle=True) for _ in range(2)]
    for epoch in range(2):
        for batches in zip(*loaders):
            minibatches = [(x.to(device), y.to(device)) for x, y in batches]
            algorithm.update(minibatches)
    torch.save(algorithm.state_dict(), "model.pkl")


if __name__ == "__main__":
    main()
