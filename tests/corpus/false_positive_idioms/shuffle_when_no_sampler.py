# ddpify-corpus idiom: shuffle=(sampler is None)
# must-not-report: DDP002
# The DataLoader shuffles only when there is no sampler: with a DistributedSampler the
# argument is False, so DataLoader never sees both. The classic pytorch/examples-era
# idiom (seen in NVIDIA apex examples/imagenet/main_amp.py).
import os

import torch
import torch.distributed as dist


def main():
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        dist.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dataset = torch.utils.data.TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
    train_sampler = None
    if distributed:
        train_sampler = torch.utils.data.distributed.DistributedSampler(dataset)
    train_loader = torch.utils.data.DataLoader(dataset, batch_size=8, shuffle=(train_sampler is None), sampler=train_sampler)
    for epoch in range(2):
        if distributed:
            train_sampler.set_epoch(epoch)
        for _batch in train_loader:
            pass
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
