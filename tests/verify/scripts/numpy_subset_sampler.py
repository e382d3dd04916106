"""A SubsetRandomSampler over numpy indices (``np.random.permutation`` split into train and
validation): its indices are numpy integers. With ``--shard`` the loader is sharded by
``ddpify.distributed_loader``; without, every rank reads the whole subset. ``ddpify verify``
must read those indices (it once took them for no indices at all and passed both runs as "an
IterableDataset shards itself")."""

import sys

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.sampler import SubsetRandomSampler

import ddpify.runtime as ddpify


def main() -> None:
    ddpify.seed(torch.manual_seed, 0)
    dataset = TensorDataset(torch.randn(40, 4), torch.randn(40, 1))
    order = np.random.permutation(len(dataset))
    sampler = SubsetRandomSampler(order[:32])
    if "--shard" in sys.argv:
        loader = ddpify.distributed_loader(dataset, batch_size=8, sampler=sampler)
    else:
        loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    model = ddpify.prepare_model(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        ddpify.set_epoch(loader, epoch)
        for x, y in loader:
            loss = ((model(x) - y) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    with ddpify.distributed():
        main()
