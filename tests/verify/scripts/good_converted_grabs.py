"""A correct conversion that grabs batches outside training: a fixed sample from the test
loader before training (for plots), and one batch of the training loader each epoch to print
its shape. Neither grab feeds an optimizer step, so ``ddpify verify`` must not judge them as
training passes (they once read as an epoch without set_epoch, and as an unsharded training
loader). The training loader keeps the per-process batch, rightly: ``batch_size`` also sizes
the targets built in the loop."""

import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

import ddpify.runtime as ddpify


def main() -> None:
    ddpify.seed(torch.manual_seed, 0)
    train_set = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
    test_set = TensorDataset(torch.randn(16, 4), torch.randn(16, 1))
    batch_size = 4
    train_loader = ddpify.distributed_loader(train_set, batch_size=batch_size, shuffle=True, per_process_batch=True)
    test_loader = DataLoader(test_set, batch_size=8, shuffle=True)
    fixed_x, _ = next(iter(test_loader))
    model = ddpify.prepare_model(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        ddpify.set_epoch(train_loader, epoch)
        ddpify.print(f"epoch {epoch}: batches of {next(iter(train_loader))[0].shape[0]}")
        model.train()
        for x, y in train_loader:
            out = model(x)
            loss = ((out - y) ** 2).mean() + (out - torch.zeros(batch_size, 1)).abs().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            ddpify.print(f"epoch {epoch}: fixed sample mean {model(fixed_x).mean().item():.3f}")
    ddpify.save(ddpify.unwrap(model).state_dict(), f"{sys.argv[1]}/model.pt")


if __name__ == "__main__":
    with ddpify.distributed():
        main()
