"""A converted-style script whose ddpify.save sits behind a rank test, so only rank 0 reaches
its barrier; rank 1 goes on into the next collective and both wait forever. ``ddpify verify
--timeout`` kills the run and names where each rank was. (When the other rank reaches another
ddpify barrier instead, or ends, the runtime's guard names it at once: test_guard_rails.)"""

import os
import sys

import torch
import torch.distributed as dist
from torch.utils.data import TensorDataset

import ddpify.runtime as ddpify


def main() -> None:
    ddpify.seed(torch.manual_seed, 0)
    data = TensorDataset(torch.randn(16, 4), torch.randn(16, 1))
    loader = ddpify.distributed_loader(data, batch_size=8, shuffle=True)
    model = ddpify.prepare_model(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x, y in loader:
        loss = ((model(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if ddpify.is_main_process():
        ddpify.save(ddpify.unwrap(model).state_dict(), os.path.join(sys.argv[1], "model.pt"))
    dist.all_reduce(torch.ones(1))


if __name__ == "__main__":
    with ddpify.distributed():
        main()
