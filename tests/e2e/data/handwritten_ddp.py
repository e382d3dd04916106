"""A minimal, hand-written, correct DDP training script (reference for the harness).

Launched with torchrun (CPU, gloo). Flags inject classic DDP mistakes so the
harness tests can prove each check actually catches them.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=8)  # per rank
    parser.add_argument("--out-dir", default=".")
    # bug injection
    parser.add_argument("--no-sampler", action="store_true", help="plain shuffle=True loader")
    parser.add_argument("--all-ranks-save", action="store_true", help="every rank saves the DDP state_dict")
    parser.add_argument("--rank-seed", action="store_true", help="seed with the rank before making data")
    parser.add_argument("--diverge", action="store_true", help="perturb params on rank 1 after training")
    args = parser.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()

    torch.manual_seed(rank if args.rank_seed else 0)
    x = torch.randn(128, 6)
    y = (x.sum(dim=1, keepdim=True) > 0).float()
    dataset = TensorDataset(x, y)

    if args.no_sampler:
        sampler = None
        loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=True)
    else:
        sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True, seed=0)
        loader = DataLoader(dataset, batch_size=args.batch_size, sampler=sampler)

    torch.manual_seed(0)  # same initial weights everywhere (DDP broadcasts anyway)
    model = DDP(nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_fn = nn.BCEWithLogitsLoss()

    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
        if rank == 0:
            print(f"epoch {epoch} loss {loss.item():.4f}")

    if args.diverge and rank == 1:
        with torch.no_grad():
            next(model.parameters()).add_(1.0)

    os.makedirs(args.out_dir, exist_ok=True)
    if args.all_ranks_save:
        torch.save(model.state_dict(), os.path.join(args.out_dir, f"model_rank{rank}.pt"))
    elif rank == 0:
        torch.save(model.module.state_dict(), os.path.join(args.out_dir, "model.pt"))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
