"""Builds the data and the model, and hands both to train() of train_eval.py."""

import torch

from train_eval import train
from utils import build_iterator

if __name__ == "__main__":
    torch.manual_seed(1)
    x, y = torch.randn(64, 4), torch.randn(64, 1)
    train_iter = build_iterator(x, y, 8)
    dev_iter = build_iterator(x[:16], y[:16], 8)
    model = torch.nn.Linear(4, 1)
    train({"lr": 0.1, "epochs": 2}, model, train_iter, dev_iter)
