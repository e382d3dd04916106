# ddpify-corpus idiom: --local_rank declared only for torch 1.x, LOCAL_RANK read from the
# environment on torch 2, unknown arguments tolerated
# must-not-report: DDP016
# On torch 1.x torch.distributed.launch passes --local_rank; on torch 2 the script reads
# LOCAL_RANK and parse_known_args() ignores the launcher's --local-rank. Works under both
# launchers. Seen in microsoft/Swin-Transformer main.py and main_moe.py.
import argparse
import os

import torch
import torch.distributed as dist

PYTORCH_MAJOR_VERSION = int(torch.__version__.split(".")[0])


def parse_option():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    if PYTORCH_MAJOR_VERSION == 1:
        parser.add_argument("--local_rank", type=int, required=True, help="local rank for DistributedDataParallel")
    args, _ = parser.parse_known_args()
    return args


def main():
    args = parse_option()
    local_rank = args.local_rank if PYTORCH_MAJOR_VERSION == 1 else int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", init_method="env://")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4).cuda(), device_ids=[local_rank])
    for _ in range(args.epochs):
        model(torch.randn(2, 4, device="cuda")).sum().backward()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
