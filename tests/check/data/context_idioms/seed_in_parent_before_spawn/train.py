# must-not-report: DDP011:40
# must-report: DDP011, DDP034
# The parent seeds before mp.spawn; the workers start with fresh RNG state and never seed:
# the true finding on the seed's line is DDP034 (--seed reaches no worker), not DDP011 (the
# same seed on every rank). DDP011 reports the worker instead (line 18): unseeded, every rank
# starts from torch's fixed default seed, and the dropout masks repeat on every rank.
import argparse

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def worker(rank, world_size):
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=rank, world_size=world_size)
    dataset = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    model = DDP(nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.1), nn.Linear(16, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--world-size", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    mp.spawn(worker, args=(args.world_size,), nprocs=args.world_size)


if __name__ == "__main__":
    main()
