"""Training for run.py: the model is built there and handed in."""

import json
import os

import torch
import torch.nn.functional as F


def train(config, model, train_iter, dev_iter):
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
    seen = []
    for epoch in range(config["epochs"]):
        for (x, ids), y in train_iter:
            loss = F.mse_loss(model(x), y)
            model.zero_grad()
            loss.backward()
            optimizer.step()
            seen.append(ids.tolist())
    with open(f"seen_{os.environ.get('RANK', '0')}.json", "w") as handle:
        json.dump(seen, handle)
    evaluate(model, dev_iter)
    torch.save(model.state_dict(), "model.pt")


def evaluate(model, data_iter):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for (x, _), y in data_iter:
            total += F.mse_loss(model(x), y, reduction="sum").item()
    print(f"dev loss {total:.4f}")
