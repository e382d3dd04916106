"""Issue 20, class 2: the model, its optimizer and the loaders come from helpers of a sibling
module; training keeps the best weights and reloads them after the last epoch."""

import helpers
import torch
import torch.nn as nn


def main():
    torch.manual_seed(0)
    train_loader, valid_loader = helpers.build_loaders(8)
    model = helpers.build_model("mlp")
    optimizer = helpers.build_optimizer(model.parameters(), lr=0.05)
    best = float("inf")
    for epoch in range(2):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            valid = sum(nn.functional.mse_loss(model(x), y).item() for x, y in valid_loader)
        print(epoch, valid)
        if valid < best:
            best = valid
            torch.save(model.state_dict(), "best.pt")
    model.load_state_dict(torch.load("best.pt"))
    torch.save(model.state_dict(), "final.pt")


if __name__ == "__main__":
    main()
