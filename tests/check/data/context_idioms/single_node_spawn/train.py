# must-not-report: DDP006, DDP032, DDP033
# A single-node design: the rendezvous is forced to 127.0.0.1 and the world is the local GPU
# count, so the spawn index is both the local and the global rank.
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def worker(gpu, ngpus):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:23456", rank=gpu, world_size=ngpus)
    torch.cuda.set_device(gpu)
    dataset = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    model = DDP(nn.Linear(8, 1).cuda(gpu), device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(gpu)), y.cuda(gpu))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if gpu == 0:
            torch.save(model.module.state_dict(), "model.pt")
            print(f"epoch {epoch}: {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    ngpus = torch.cuda.device_count()
    mp.spawn(worker, args=(ngpus,), nprocs=ngpus)
