"""The model is wrapped, the training loader is left plain, with worker processes: every rank
trains on the whole set. The workers draw a whole short pass of indices before the first step;
``ddpify verify`` must still see that the pass fed training, and fail the shards row (it once
showed the data rows as n/a: unseen wonders_of_world script)."""

import torch
from torch.utils.data import DataLoader, TensorDataset

import ddpify.runtime as ddpify


def main() -> None:
    ddpify.seed(torch.manual_seed, 0)
    loader = DataLoader(TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8, shuffle=True, num_workers=2)
    model = ddpify.prepare_model(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        for x, y in loader:
            loss = ((model(x) - y) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    with ddpify.distributed():
        main()
