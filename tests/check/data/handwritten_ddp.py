"""A hand-written DDP training script (CPU, gloo), of the kind the linter's fixes meet in the
wild. Its checkpoint helper is called under a rank guard, its resume loads through the
always-present wrapper with strict=False, its epoch loop forgets set_epoch, its --local_rank
argument predates torchrun, its resume load has no map_location and every rank prints. Each
rank writes rank<RANK>.json into --out."""

import argparse
import json
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def save_checkpoint(state, path):
    torch.save(state, path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=-1)
    parser.add_argument("--out", default=".")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(64, 4), torch.randn(64, 1))
    train_sampler = DistributedSampler(data)
    loader = DataLoader(data, batch_size=8, shuffle=(train_sampler is None), sampler=train_sampler)
    model = DDP(torch.nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    path = os.path.join(args.out, "checkpoint.pth")

    record = {"rank": rank, "local_rank": args.local_rank, "orders": []}
    if args.resume:
        ckpt = torch.load(path)
        result = model.load_state_dict(ckpt["model"], strict=False)
        record["missing"] = list(result.missing_keys)
        record["unexpected"] = list(result.unexpected_keys)
        record["checkpoint"] = {k: v.tolist() for k, v in ckpt["model"].items()}  # as read from disk
        record["resumed"] = {k: v.tolist() for k, v in model.state_dict().items()}

    for epoch in range(args.epochs):
        order = []
        for x, y in loader:
            order.append(round(float(x.sum()), 4))
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        record["orders"].append(order)
        print(f"epoch {epoch} done")
        if rank == 0:
            save_checkpoint({"epoch": epoch + 1, "model": model.state_dict()}, path)

    with open(os.path.join(args.out, f"rank{rank}.json"), "w") as handle:
        json.dump(record, handle)
    dist.barrier()  # no rank closes its connections while another still talks (gloo aborts it)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
