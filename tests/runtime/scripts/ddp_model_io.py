"""Run under torchrun (2 ranks, CPU): DDP model wrapping/training, checkpoints, rank-0 side
effects, and the distributed() context manager tearing down when its body raises.

Usage: torchrun --standalone --nproc_per_node=2 ddp_model_io.py OUT_DIR -> OUT_DIR/rank<r>.json
The assertions live in tests/runtime/test_runtime_torchrun.py.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn

import ddpify.runtime as ddpify


class Boom(Exception):
    """Raised at the end of the distributed() body to check teardown happens anyway."""


class Recorder:
    """A logger stand-in; counts constructions per process."""

    created = 0

    def __init__(self, name: str) -> None:
        Recorder.created += 1
        self.name = name

    def add_scalar(self, tag: str, value: float) -> "Recorder":
        return self


def flat_params(model: nn.Module) -> list[float]:
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()]).tolist()


def train_steps(model: nn.Module, xs: torch.Tensor, ys: torch.Tensor, steps: int = 3) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        nn.functional.mse_loss(model(xs), ys).backward()
        opt.step()


def body(out_dir: str, rec: dict) -> None:
    rank = ddpify.rank()
    rec["is_distributed"] = ddpify.is_distributed()
    rec["initialized_inside"] = dist.is_initialized()

    # --- model: identical init from ddpify.seed, DDP wrapping, training on different data.
    ddpify.seed(torch.manual_seed, 0)
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
    rec["init_params"] = flat_params(model)
    ddp = ddpify.prepare_model(model)
    rec["wrapped_type"] = type(ddp).__name__
    rec["unwrap_is_model"] = ddpify.unwrap(ddp) is model
    rec["has_sync_bn"] = any(isinstance(m, nn.SyncBatchNorm) for m in ddp.modules())
    g = torch.Generator().manual_seed(100 + rank)  # different data on each rank
    xs, ys = torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)
    rec["data_sum"] = float(xs.sum())
    train_steps(ddp, xs, ys)
    rec["trained_params"] = flat_params(model)

    # DDP on equal per-rank batches == single-process training on the concatenated batch.
    lin = nn.Linear(4, 1)
    reference = copy.deepcopy(lin)
    train_steps(ddpify.prepare_model(lin), xs, ys)
    gathered_x = [torch.empty_like(xs) for _ in range(2)]
    gathered_y = [torch.empty_like(ys) for _ in range(2)]
    dist.all_gather(gathered_x, xs)
    dist.all_gather(gathered_y, ys)
    train_steps(reference, torch.cat(gathered_x), torch.cat(gathered_y))
    rec["ddp_vs_reference_max_diff"] = max(float((a - b).detach().abs().max()) for a, b in zip(lin.parameters(), reference.parameters()))

    # Wrapping edge cases.
    frozen = nn.Linear(2, 2).requires_grad_(False)
    rec["frozen_unchanged"] = ddpify.prepare_model(frozen) is frozen
    rec["ddp_unchanged"] = ddpify.prepare_model(ddp) is ddp
    inner = nn.Linear(2, 2)
    rewrapped = ddpify.prepare_model(nn.DataParallel(inner))
    rec["dataparallel_rewrapped"] = [type(rewrapped).__name__, rewrapped.module is inner]

    # --- checkpoints: written once by rank 0, visible to rank 1 right after the call.
    ckpt = os.path.join(out_dir, "ckpt.pt")
    real_save, calls = torch.save, []

    def counting_save(*args, **kwargs):
        calls.append(1)
        return real_save(*args, **kwargs)

    torch.save = counting_save
    try:
        if rank == 0:
            time.sleep(0.5)  # rank 1 would look too early without the barrier
        ddpify.save({"model": ddp.state_dict(), "writer": rank}, ckpt)
        rec["exists_after_save"] = os.path.exists(ckpt)
        ddpify.save(ddp, os.path.join(out_dir, "whole_model.pt"))
    finally:
        torch.save = real_save
    rec["torch_save_calls"] = len(calls)
    loaded = ddpify.load(ckpt)
    rec["loaded_writer"] = loaded["writer"]
    rec["loaded_device"] = str(next(iter(loaded["model"].values())).device)
    whole = ddpify.load(os.path.join(out_dir, "whole_model.pt"), weights_only=False)
    rec["whole_model_type"] = type(whole).__name__
    ddpify.barrier()
    rec["dir_listing"] = sorted(os.listdir(out_dir))

    # --- the wrapper's checkpoints are the bare model's: plain keys out, either kind in.
    state = ddp.state_dict()
    rec["wrapper_keys_plain"] = list(state) == list(model.state_dict())
    ema = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
    ema.load_state_dict(state)  # an EMA copy fed from the wrapper, as other files' code does
    rec["plain_copy_loads_wrapper_state"] = flat_params(ema) == flat_params(model)
    holder = nn.ModuleDict({"net": ddp})  # a wrapper held by another module
    rec["held_keys"] = sorted({k.split(".")[1] for k in holder.state_dict()})
    rec["held_round_trip"] = str(holder.load_state_dict(holder.state_dict()))
    # --- state dict with "module." keys (an old DDP checkpoint) into a fresh, unwrapped model,
    # and into the wrapper itself; a plain one into the wrapper.
    prefixed = {"module." + k: v for k, v in state.items()}
    fresh = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
    result = ddpify.load_state_dict(fresh, prefixed)
    rec["load_missing_unexpected"] = [list(result.missing_keys), list(result.unexpected_keys)]
    rec["state_still_prefixed"] = all(k.startswith("module.") for k in prefixed)
    rec["fresh_matches"] = flat_params(fresh) == flat_params(model)
    rec["wrapper_loads_both"] = [str(ddp.load_state_dict(prefixed)), str(ddp.load_state_dict(fresh.state_dict()))]

    # --- rank-0-only side effects.
    writer = ddpify.rank_zero(Recorder)("runs/x")
    writer.add_scalar("loss", 1.0).add_scalar("acc", 2.0)
    rec["rank_zero_type"] = type(writer).__name__
    rec["recorder_created"] = Recorder.created
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ddpify.print("hello from", rank)
    rec["printed"] = out.getvalue()

    marker = os.path.join(out_dir, "downloaded.txt")
    with ddpify.main_process_first():
        if rank == 0:
            time.sleep(0.5)
            with open(marker, "w") as fh:
                fh.write("done")
        rec["marker_seen_in_body"] = os.path.exists(marker)

    raise Boom("training failed")


def main() -> None:
    out_dir = sys.argv[1]
    rec: dict = {"rank": ddpify.rank()}
    try:
        with ddpify.distributed() as env:
            rec["env"] = [env.rank, env.local_rank, env.world_size, env.local_world_size]
            body(out_dir, rec)
    except Boom:
        rec["raised"] = True
    rec["initialized_after"] = dist.is_initialized()
    ddpify.teardown()  # idempotent
    with open(os.path.join(out_dir, f"rank{rec['rank']}.json"), "w") as fh:
        json.dump(rec, fh)


if __name__ == "__main__":
    main()
