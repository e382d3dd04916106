"""Train an MLP classifier with a small Trainer class.

The data is synthetic: Gaussian feature vectors labelled by a random
two-layer "teacher" network, so the task is learnable but not trivial.
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, TensorDataset
import ddpify.runtime as ddpify


def make_dataset(num_samples: int, num_features: int, num_classes: int) -> TensorDataset:
    """Features and teacher labels drawn from the global RNG (seed it first)."""
    teacher = nn.Sequential(nn.Linear(num_features, 32), nn.Tanh(), nn.Linear(32, num_classes))
    features = torch.randn(num_samples, num_features)
    with torch.no_grad():
        labels = teacher(features).argmax(dim=1)
    return TensorDataset(features, labels)


def build_loader(dataset: Dataset, batch_size: int) -> DataLoader:
    return ddpify.distributed_loader(dataset, batch_size=batch_size, shuffle=True)


class MLP(nn.Module):
    def __init__(self, num_features: int, hidden: int, num_classes: int) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(num_features, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class Trainer:
    """Owns the model, optimizer and data; `fit()` runs the whole training."""

    def __init__(self, model: nn.Module, train_loader: DataLoader, lr: float, epochs: int,
                 out_dir: str, save_every: int = 1) -> None:
        self.device = ddpify.device() if torch.cuda.is_available() else "cpu"
        self.model = model.to(self.device)
        self.train_loader = train_loader
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.epochs = epochs
        self.out_dir = out_dir
        self.save_every = save_every
        self.model = ddpify.prepare_model(self.model)

    def _run_batch(self, source: torch.Tensor, targets: torch.Tensor) -> float:
        self.optimizer.zero_grad()
        output = self.model(source)
        loss = F.cross_entropy(output, targets)
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def _run_epoch(self, epoch: int) -> None:
        self.model.train()
        running_loss = 0.0
        for source, targets in self.train_loader:
            source = source.to(self.device)
            targets = targets.to(self.device)
            running_loss += self._run_batch(source, targets)
        ddpify.print(f"[{self.device}] epoch {epoch} | batch size {self.train_loader.batch_size} | "
                     f"steps {len(self.train_loader)} | mean loss {ddpify.mean_over_ranks(running_loss / len(self.train_loader)):.4f}")

    def _save_checkpoint(self, epoch: int) -> None:
        path = os.path.join(self.out_dir, "trainer_ckpt.pt")
        ddpify.save(ddpify.unwrap(self.model).state_dict(), path)
        ddpify.print(f"epoch {epoch} | checkpoint saved at {path}")

    def fit(self) -> None:
        os.makedirs(self.out_dir, exist_ok=True)
        for epoch in range(self.epochs):
            ddpify.set_epoch(self.train_loader, epoch)
            self._run_epoch(epoch)
            if epoch % self.save_every == 0 or epoch == self.epochs - 1:
                self._save_checkpoint(epoch)


def main() -> None:
    parser = argparse.ArgumentParser(description="MLP classifier trained with a Trainer class")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--save-every", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", type=str, default=".")
    args = parser.parse_args()

    ddpify.seed(torch.manual_seed, args.seed)
    dataset = make_dataset(num_samples=1024, num_features=20, num_classes=4)
    train_loader = build_loader(dataset, args.batch_size)
    model = MLP(num_features=20, hidden=64, num_classes=4)

    trainer = Trainer(model, train_loader, lr=args.lr, epochs=args.epochs,
                      out_dir=args.out_dir, save_every=args.save_every)
    trainer.fit()


if __name__ == "__main__":
    with ddpify.distributed():
        main()
