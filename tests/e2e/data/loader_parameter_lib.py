"""A training module whose loader arrives as a parameter: the launcher (another file) builds
the DataLoader and calls fit(loader, epochs). Nothing here builds a loader to rewrite."""
import torch
import torch.nn as nn


def fit(train_loader, epochs):
    torch.manual_seed(0)
    model = nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    return model
