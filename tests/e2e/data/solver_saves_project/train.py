"""Builds the data (a DataLoader subclass of data.py), the model and its optimizer, and hands
them to the Solver of solver.py, which trains, logs and saves."""
import argparse

import torch

from data import PairLoader, PairSet
from solver import Solver


class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def forward(self, x):
        return self.net(x)

    @staticmethod
    def serialize(model, epoch):
        return {"state_dict": model.state_dict(), "epoch": epoch}


def main(args):
    torch.manual_seed(0)
    tr_loader = PairLoader(PairSet(), batch_size=8, shuffle=True)
    cv_loader = PairLoader(PairSet(16), batch_size=8)
    data = {"tr_loader": tr_loader, "cv_loader": cv_loader}
    model = Regressor()
    print(model)
    model = torch.nn.DataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    solver = Solver(data, model, optimizer, args)
    solver.train()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--save_folder", default="exp")
    main(parser.parse_args())
