# ddpify-corpus idiom: a script that always wraps the model saves its resume checkpoint
# through the wrapper and loads it back into the wrapper
# must-not-report: DDP007, DDP008
# There is no single-process path: the model is wrapped unconditionally right after it
# is built, so the 'module.' keys written at the end of an epoch are exactly the keys the
# auto-resume expects. Weights meant for other programs are exported separately through
# .module. Seen in barlowtwins main.py/evaluate.py, vicreg, I-JEPA.
import os
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(gpu, world_size, checkpoint_dir):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29512", rank=gpu, world_size=world_size)
    torch.cuda.set_device(gpu)
    rank = gpu  # one node: the spawn index is the global rank
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)).cuda(gpu)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    start_epoch = 0
    if (checkpoint_dir / "checkpoint.pth").is_file():
        ckpt = torch.load(checkpoint_dir / "checkpoint.pth", map_location="cpu")
        start_epoch = ckpt["epoch"]
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
    for epoch in range(start_epoch, 3):
        model(torch.randn(4, 8, device="cuda")).sum().backward()
        optimizer.step()
        if rank == 0:
            state = dict(epoch=epoch + 1, model=model.state_dict(), optimizer=optimizer.state_dict())
            torch.save(state, checkpoint_dir / "checkpoint.pth")
    if rank == 0:
        torch.save(model.module[0].state_dict(), checkpoint_dir / "backbone.pth")
    dist.destroy_process_group()


if __name__ == "__main__":
    folder = Path(os.environ.get("CKPT_DIR", "checkpoint"))
    folder.mkdir(exist_ok=True)
    mp.spawn(worker, args=(torch.cuda.device_count(), folder), nprocs=torch.cuda.device_count())
