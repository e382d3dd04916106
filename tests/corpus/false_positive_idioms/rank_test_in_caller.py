# ddpify-corpus idiom: the rank test is in the caller, not in the helper that saves/prints
# must-not-report: DDP005, DDP012
# save_checkpoint() and export_samples() contain a bare torch.save / print, but every call
# site is under a rank-0 test. Seen in NVIDIA apex imagenet (save_checkpoint under
# `if args.local_rank == 0`), DiT sample_ddp.py (`if rank == 0:`), open_clip main.py
# (`if is_master(args):`).
import os

import torch
import torch.distributed as dist


def save_checkpoint(state, filename="checkpoint.pth"):
    torch.save(state, filename)
    print(f"saved {filename}")


def export_samples(folder):
    names = sorted(os.listdir(folder))
    print(f"{len(names)} samples in {folder}")
    return names


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4).cuda())
    for epoch in range(2):
        model(torch.randn(2, 4, device="cuda")).sum().backward()
        if rank == 0:
            save_checkpoint({"epoch": epoch, "model": model.module.state_dict()})
    dist.barrier()
    if rank == 0:
        export_samples("samples")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
