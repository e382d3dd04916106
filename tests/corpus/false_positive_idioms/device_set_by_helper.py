# ddpify-corpus idiom: the per-rank CUDA device is set by a helper before the training
# function runs; the training function uses the bare current device
# must-not-report: DDP017
# `distsetup.init()` calls torch.cuda.set_device(LOCAL_RANK); afterwards
# torch.device("cuda") means "this rank's GPU". Seen in NVlabs/edm training_loop.py
# (torch_utils.distributed.init()).
import distsetup
import torch
import torch.distributed as dist


def training_loop(device=torch.device("cuda"), steps=3):  # noqa: B008 (the idiom: a default device argument)
    net = torch.nn.Linear(8, 8).to(device)
    ddp = torch.nn.parallel.DistributedDataParallel(net, device_ids=[device])
    for _ in range(steps):
        ddp(torch.randn(4, 8, device=device)).sum().backward()


def main():
    distsetup.init()  # init_process_group + torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    training_loop()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
