# ddpify-corpus idiom: a branch on a configuration value that happens to be the string
# 'rank' (answer ranking), taken for a rank guard
# must-not-report: DDP027
# `config["inference"] == "rank"` has the same value on every process; the forward inside
# it runs on all ranks. Seen in salesforce/BLIP train_vqa.py (inference='rank' vs 'generate').
import os

import torch
import torch.distributed as dist


@torch.no_grad()
def evaluation(model, loader, config):
    answers = []
    for x in loader:
        if config["inference"] == "generate":
            answers.append(model(x).argmax(-1))
        elif config["inference"] == "rank":
            answers.append(model(x).topk(3).indices)
    return answers


def main():
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 5).cuda())
    loader = [torch.randn(4, 8, device="cuda") for _ in range(3)]
    evaluation(model, loader, {"inference": "rank"})
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
