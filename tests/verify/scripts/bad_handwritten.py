"""Hand-written DDP with the classic mistakes, one of each: ``ddpify verify`` must FAIL the
rows named in the comments (tests/verify/test_verify_runs.py)."""

import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

out = sys.argv[1]
dist.init_process_group("gloo")
torch.manual_seed(0)  # rng: the same seed on every rank, never made per rank
data = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
model = DistributedDataParallel(torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1)))
head = torch.nn.Linear(1, 1)  # wrapped: trained, never wrapped
optimizer = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=0.1)
log = open(os.path.join(out, "train.log"), "a")  # writes: every rank appends to one file

plain = DataLoader(data, batch_size=8, shuffle=True)  # shards: no DistributedSampler
for epoch in range(2):
    for x, y in plain:
        x = x + 0.1 * torch.randn_like(x)  # rng: augmentation noise, the same on every rank
        loss = ((head(model(x)) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {loss.item():.3f}")  # writes: printed by every rank, untagged
    log.write(f"{epoch}\n")

sampled = DataLoader(data, batch_size=4, sampler=DistributedSampler(data))
for epoch in range(2):  # noqa: B007 -- reshuffle: sampler.set_epoch(epoch) never called
    for x, y in sampled:
        ix = torch.randint(len(data), (4,))  # draws: the same indices on every rank
        loss = ((model.module(x) - y) ** 2).mean() + ((model.module(data[ix][0]) - data[ix][1]) ** 2).mean()  # forward: bypass
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

torch.save(model.state_dict(), os.path.join(out, "last.pt"))  # checkpoints: every rank, 'module.' keys
log.close()
model.to("meta")  # wrapped: a move after the wrap
dist.destroy_process_group()
