# ddpify-corpus idiom: the rank test is computed once into a flag that later guards the I/O
# must-not-report: DDP005, DDP013
# `save_logs = args.logs and is_master(args)` and then `if save_logs:` around the
# SummaryWriter and torch.save. Seen in open_clip main.py (args.save_logs).
import argparse
import os

import torch
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter


def is_master(args):
    return args.rank == 0


def main(args):
    dist.init_process_group("nccl")
    args.rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    save_logs = args.logs is not None and is_master(args)
    writer = None
    if save_logs:
        writer = SummaryWriter(os.path.join(args.logs, "tb"))
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4).cuda())
    for epoch in range(2):
        loss = model(torch.randn(2, 4, device="cuda")).sum()
        loss.backward()
        if writer is not None:
            writer.add_scalar("loss", loss.item(), epoch)
        if save_logs:
            torch.save({"epoch": epoch, "model": model.module.state_dict()}, os.path.join(args.logs, "last.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--logs", default="logs")
    main(parser.parse_args())
