# must-not-report: DDP005, DDP012, DDP013
# must-report: DDP001
# should_write() (utils/dist.py, re-exported by utils/__init__.py) is a rank-0 test.
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import utils
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter
from utils.dist import should_write


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    writer = SummaryWriter("runs") if should_write() else None
    dataset = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    loader = DataLoader(dataset, batch_size=16, sampler=DistributedSampler(dataset))
    model = DDP(nn.Linear(8, 1).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(3):
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if utils.should_write():
            print(f"epoch {epoch}: {loss.item():.4f}")
            writer.add_scalar("loss", loss.item(), epoch)
        if should_write():
            torch.save(model.module.state_dict(), "model.pt")


if __name__ == "__main__":
    main()
