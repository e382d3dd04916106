# ddpify-corpus idiom: the 'module.' prefix stripped explicitly before loading into the plain model
# must-not-report: DDP007, DDP008
# The script saves its checkpoint through the wrapper ('module.' keys) and, to resume or to
# evaluate on one GPU, strips the prefix itself before loading into the plain model.
import os

import torch
import torch.distributed as dist


def load_weights(model, path):
    state = torch.load(path, map_location="cpu")["model"]
    state = {k[len("module."):] if k.startswith("module.") else k: v for k, v in state.items()}
    model.load_state_dict(state)


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = torch.nn.Linear(8, 2).cuda()
    if os.path.isfile("checkpoint.pth"):
        load_weights(model, "checkpoint.pth")
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    model(torch.randn(4, 8, device="cuda")).sum().backward()
    if dist.get_rank() == 0:
        torch.save({"model": model.state_dict()}, "checkpoint.pth")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
