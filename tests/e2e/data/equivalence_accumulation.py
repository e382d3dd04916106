"""The equivalence script with gradient accumulation (2 micro-batches per step): no shuffle,
no dropout, no BatchNorm. Converted and run on 2 ranks it must end with the parameters this script ends
with on 1 process."""
import argparse
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--out-dir", default=".")
    args = parser.parse_args()

    torch.manual_seed(0)
    features = torch.randn(256, 8)
    targets = features @ torch.randn(8, 1) + 0.1 * torch.randn(256, 1)
    train_loader = DataLoader(TensorDataset(features, targets), batch_size=16)
    accumulate = 2
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.MSELoss()
    for epoch in range(args.epochs):
        for i, (x, y) in enumerate(train_loader):
            x, y = x.to(device), y.to(device)
            loss = loss_fn(model(x), y) / accumulate
            loss.backward()
            if (i + 1) % accumulate == 0:
                optimizer.step()
                optimizer.zero_grad()
        print(f"epoch {epoch} loss {loss.item():.5f}")
    torch.save(model.state_dict(), os.path.join(args.out_dir, "final.pt"))


if __name__ == "__main__":
    main()
