"""Issue 20, class 2: two models live in a dict and are trained in a loop over it, each with
its own optimizer from a dict comprehension; the batches reach backward through loaders keyed
by phase. Each model is wrapped where it goes into the dict."""

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
train_set = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
valid_set = TensorDataset(torch.randn(24, 4), torch.randn(24, 1))
loaders = {"train": DataLoader(train_set, batch_size=8, shuffle=True), "valid": DataLoader(valid_set, batch_size=8)}
models = {"linear": nn.Linear(4, 1), "mlp": nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))}
optimizers = {name: torch.optim.SGD(model.parameters(), lr=0.05) for name, model in models.items()}
for epoch in range(2):
    for phase in ("train", "valid"):
        for name, model in models.items():
            model.train(phase == "train")
            total = 0.0
            for x, y in loaders[phase]:
                with torch.set_grad_enabled(phase == "train"):
                    loss = nn.functional.mse_loss(model(x), y)
                if phase == "train":
                    optimizers[name].zero_grad()
                    loss.backward()
                    optimizers[name].step()
                total += loss.item()
            print(epoch, phase, name, total)
for name, model in models.items():
    torch.save(model.state_dict(), f"{name}.pt")
