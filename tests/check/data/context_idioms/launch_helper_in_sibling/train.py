# must-not-report: DDP012, DDP011
# run_on_all_gpus (launcher.py) spawns `worker`: the code around it runs once, in the parent.
import argparse

import torch
import torch.distributed as dist
import torch.nn as nn
from launcher import run_on_all_gpus
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def worker(rank, world_size, seed):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29500", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    torch.manual_seed(seed + rank)
    dataset = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    model = DDP(nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.1), nn.Linear(16, 1)).cuda(rank), device_ids=[rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(rank)), y.cuda(rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch}: {loss.item():.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print("starting with", args)
    torch.manual_seed(args.seed)
    run_on_all_gpus(worker, args.seed)
    print("done")


if __name__ == "__main__":
    main()
