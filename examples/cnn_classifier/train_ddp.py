"""Train a small CNN image classifier on a synthetic dataset.

The images are random noise and the labels come from a fixed random linear
"teacher", so the task is learnable without downloading anything.

Usage:
    python train.py --epochs 10 --out-dir runs/cnn
    python train.py --epochs 20 --resume runs/cnn/checkpoint.pt --out-dir runs/cnn
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
import ddpify.runtime as ddpify

NUM_CLASSES = 4
IMAGE_SHAPE = (3, 16, 16)


class Net(nn.Module):
    """Two conv blocks (conv -> BN -> ReLU -> pool) followed by a linear head."""

    def __init__(self, num_classes: int = NUM_CLASSES) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, kernel_size=3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32 * 4 * 4, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)  # 16x16 -> 8x8
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)  # 8x8 -> 4x4
        return self.fc(torch.flatten(x, 1))


def make_synthetic_data(num_train: int, num_val: int) -> tuple[TensorDataset, TensorDataset]:
    """Noisy images labelled by a random linear teacher (uses the global RNG)."""
    # Each image is a blocky 4x4 "scene" upsampled to 16x16 plus pixel noise; the
    # teacher only sees the scene, so a small CNN can learn the labels.
    num_images = num_train + num_val
    scenes = torch.randn(num_images, IMAGE_SHAPE[0], 4, 4)
    teacher = torch.randn(scenes[0].numel(), NUM_CLASSES)
    labels = (scenes.flatten(1) @ teacher).argmax(dim=1)
    images = F.interpolate(scenes, size=IMAGE_SHAPE[1:], mode="nearest")
    images = images + 0.5 * torch.randn(num_images, *IMAGE_SHAPE)
    train_set = TensorDataset(images[:num_train], labels[:num_train])
    val_set = TensorDataset(images[num_train:], labels[num_train:])
    return train_set, val_set


def train_one_epoch(model: nn.Module, loader: DataLoader, optimizer: torch.optim.Optimizer,
                    device: torch.device) -> float:
    """Run one pass over the training data; returns the mean training loss."""
    model.train()
    total_loss = 0.0
    total_samples = 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        optimizer.zero_grad()
        logits = model(images)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        total_loss += loss.item() * labels.size(0)
        total_samples += labels.size(0)
    return total_loss / total_samples


@torch.no_grad()
def evaluate(model: nn.Module, loader: DataLoader, device: torch.device) -> tuple[float, float]:
    """Returns (accuracy, mean loss) over the whole loader."""
    model.eval()
    loss_sum = 0.0
    correct = 0
    count = 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        logits = model(images)
        loss_sum += F.cross_entropy(logits, labels, reduction="sum").item()
        correct += (logits.argmax(dim=1) == labels).sum().item()
        count += labels.size(0)
    return correct / count, loss_sum / count


def main() -> None:
    parser = argparse.ArgumentParser(description="Synthetic CNN classifier")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--out-dir", type=str, default=".")
    parser.add_argument("--resume", type=str, default=None, metavar="PATH",
                        help="checkpoint.pt to continue training from")
    args = parser.parse_args()

    ddpify.seed(torch.manual_seed, args.seed)
    train_set, val_set = make_synthetic_data(num_train=512, num_val=128)

    train_loader = ddpify.distributed_loader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=0)
    val_loader = DataLoader(val_set, batch_size=args.batch_size, shuffle=False, num_workers=0)

    device = torch.device(ddpify.device() if torch.cuda.is_available() else "cpu")
    model = Net().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)

    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=ddpify.device())
        ddpify.load_state_dict(model, ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start_epoch = ckpt["epoch"] + 1
        ddpify.print(f"Resumed from {args.resume} (epoch {ckpt['epoch']})")

    os.makedirs(args.out_dir, exist_ok=True)
    best_acc = 0.0
    model = ddpify.prepare_model(model)
    for epoch in range(start_epoch, args.epochs):
        ddpify.set_epoch(train_loader, epoch)
        train_loss = train_one_epoch(model, train_loader, optimizer, device)
        val_acc, val_loss = evaluate(model, val_loader, device)
        scheduler.step()
        ddpify.print(f"epoch {epoch:3d} | train loss {train_loss:.4f} | "
                     f"val loss {val_loss:.4f} | val acc {val_acc:.3f}")

        ddpify.save({"epoch": epoch, "model": ddpify.unwrap(model).state_dict(), "optimizer": optimizer.state_dict()},
                    os.path.join(args.out_dir, "checkpoint.pt"))
        if val_acc > best_acc:
            best_acc = val_acc
            ddpify.save(ddpify.unwrap(model).state_dict(), os.path.join(args.out_dir, "best.pt"))


if __name__ == "__main__":
    with ddpify.distributed():
        main()
