# ddpify-corpus idiom: prints in the launcher process, before torch.multiprocessing.spawn
# must-not-report: DDP012
# main() runs once, in the parent process; it prints the options and then starts one
# worker per GPU. Only the worker function runs on every rank. Seen in
# stylegan2-ada-pytorch train.py (16 false DDP012 findings).
import json
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world_size, options):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29511", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4).cuda(), device_ids=[rank])
    model(torch.randn(2, 4, device="cuda")).sum().backward()
    dist.destroy_process_group()


def main():
    options = {"lr": 0.01, "gpus": torch.cuda.device_count()}
    print("Training options:")
    print(json.dumps(options, indent=2))
    print(f"Output directory: {os.getcwd()}")
    print("Launching processes...")
    mp.spawn(worker, args=(options["gpus"], options), nprocs=options["gpus"])


if __name__ == "__main__":
    main()
