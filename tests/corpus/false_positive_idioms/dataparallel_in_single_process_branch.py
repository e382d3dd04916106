# ddpify-corpus idiom: nn.DataParallel only in the single-process branch of a DDP script
# must-not-report: DDP024
# Launched without a launcher (RANK unset) on a multi-GPU machine the script falls back
# to DataParallel; under torchrun it uses DistributedDataParallel. The two never meet.
# Seen in ultralytics/yolov5 train.py and segment/train.py.
import os

import torch
import torch.distributed as dist

LOCAL_RANK = int(os.getenv("LOCAL_RANK", "-1"))
RANK = int(os.getenv("RANK", "-1"))


def main():
    if LOCAL_RANK != -1:
        torch.cuda.set_device(LOCAL_RANK)
        dist.init_process_group("nccl")
    model = torch.nn.Linear(8, 2).cuda()
    if RANK == -1 and torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)
    if RANK != -1:
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[LOCAL_RANK])
    model(torch.randn(4, 8, device="cuda")).sum().backward()
    if RANK != -1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
