"""A conversion that kept the per-process batch for a reason that does not hold: the only
tensor "sized by the batch" is a sample of its own size, drawn without gradients for a plot.
The global batch doubles for nothing: ``ddpify verify`` must fail the batch row."""

import torch
from torch.utils.data import TensorDataset

import ddpify.runtime as ddpify


def main() -> None:
    ddpify.seed(torch.manual_seed, 0)
    data = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
    loader = ddpify.distributed_loader(data, batch_size=8, shuffle=True, per_process_batch=True)
    model = ddpify.prepare_model(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        ddpify.set_epoch(loader, epoch)
        for x, y in loader:
            loss = ((model(x) - y) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            ddpify.print(f"epoch {epoch}: sample {model(torch.randn(8, 4)).mean().item():.3f}")


if __name__ == "__main__":
    with ddpify.distributed():
        main()
