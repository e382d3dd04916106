# ddpify-corpus idiom: exported (plain) weights loaded into the plain model before the wrap,
# in a script that also saves a wrapped resume checkpoint
# must-not-report: DDP008
# The load reads a different file (weights exported through .module by the pre-training
# script, plain keys) into the model before DistributedDataParallel: the keys match.
# Seen in barlowtwins evaluate.py (linear evaluation of a pre-trained backbone).
import os

import torch
import torch.distributed as dist


def main():
    dist.init_process_group("nccl")
    gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(gpu)
    model = torch.nn.Linear(8, 2).cuda(gpu)
    state_dict = torch.load(os.environ.get("PRETRAINED", "backbone.pth"), map_location="cpu")
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        model(torch.randn(4, 8, device="cuda")).sum().backward()
        optimizer.step()
        if dist.get_rank() == 0:
            torch.save({"epoch": epoch + 1, "model": model.state_dict()}, "checkpoint.pth")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
