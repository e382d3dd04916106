# must-not-report: DDP007, DDP008
# The wrapper's keys are this project's checkpoint format: ckpt.load_weights strips them.
import os

import ckpt
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    net = nn.Linear(8, 1).cuda(local_rank)
    if os.path.exists("last.pt"):
        ckpt.load_weights(net, "last.pt")
    model = DDP(net, device_ids=[local_rank])
    dataset = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=16, sampler=sampler)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(3):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            torch.save({"model": model.state_dict(), "epoch": epoch}, "last.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
