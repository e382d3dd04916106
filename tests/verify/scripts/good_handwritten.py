"""Hand-written DDP done right: ``ddpify verify`` passes every row that applies."""

import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

out = sys.argv[1]
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)  # the same data and model on every rank
data = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
model = DistributedDataParallel(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)))
torch.manual_seed(1 + rank)  # then a stream of its own per rank
draws = torch.Generator().manual_seed(100 + rank)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
sampler = DistributedSampler(data)
loader = DataLoader(data, batch_size=4, sampler=sampler)
for epoch in range(2):
    sampler.set_epoch(epoch)
    for x, y in loader:
        x = x + 0.1 * torch.randn_like(x)
        ix = torch.randint(len(data), (2,), generator=draws)
        loss = ((model(torch.cat([x, data[ix][0]])) - torch.cat([y, data[ix][1]])) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    total = torch.tensor([loss.item()])
    dist.all_reduce(total)
    if rank == 0:
        print(f"epoch {epoch} mean loss {total.item() / dist.get_world_size():.3f}")
        torch.save(model.module.state_dict(), os.path.join(out, "model.pt"))
    print(f"[rank {rank}] epoch {epoch} done")
    dist.barrier()
with open(os.path.join(out, f"rank{rank}.log"), "w") as fh:
    fh.write("done\n")
dist.destroy_process_group()
