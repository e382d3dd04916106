"""The training loop, its checkpoints and its logs (Conv-TasNet's Solver): handed the data, the
model (an nn.DataParallel, read through .module) and the optimizer."""
import os

import torch


class Solver:
    def __init__(self, data, model, optimizer, args):
        self.tr_loader = data["tr_loader"]
        self.cv_loader = data["cv_loader"]
        self.model = model
        self.optimizer = optimizer
        self.epochs = args.epochs
        self.save_folder = args.save_folder
        os.makedirs(self.save_folder, exist_ok=True)

    def train(self):
        best = float("inf")
        for epoch in range(self.epochs):
            self.model.train()
            tr_loss = self._run_one_epoch(self.tr_loader)
            print(f"epoch {epoch + 1} train loss {tr_loss:.4f}")
            torch.save(self.model.module.serialize(self.model.module, epoch + 1), os.path.join(self.save_folder, f"epoch{epoch + 1}.pth"))
            self.model.eval()
            with torch.no_grad():
                cv_loss = self._run_one_epoch(self.cv_loader)
            if cv_loss < best:
                best = cv_loss
                torch.save(self.model.module.serialize(self.model.module, epoch + 1), os.path.join(self.save_folder, "best.pth"))
                print(f"best so far, saved ({cv_loss:.4f})")

    def _run_one_epoch(self, loader):
        total = 0.0
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            if self.model.training:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            total += loss.item()
        return total / len(loader)
