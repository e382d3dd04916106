"""ddpify.unsharded (evaluation over a training loader) and the per-process worker cap."""

from __future__ import annotations

import os

import torch
from torch.utils.data import DataLoader, TensorDataset

import ddpify.runtime as ddpify


def _data(n: int = 64) -> TensorDataset:
    return TensorDataset(torch.arange(n))


def test_unsharded_gives_the_single_process_loader(as_rank) -> None:  # type: ignore[no-untyped-def]
    as_rank(1, 2)
    sharded = ddpify.distributed_loader(_data(), batch_size=8, shuffle=False)
    seen = [int(i) for (batch,) in sharded for i in batch]
    assert len(seen) == 32 and len(sharded) == 8 and sharded.batch_size == 4  # half the data and batch, same steps
    whole = ddpify.unsharded(sharded)
    assert [int(i) for (batch,) in whole for i in batch] == list(range(64))
    assert whole.batch_size == 8 and ddpify.unsharded(sharded) is whole  # built once


def test_unsharded_leaves_plain_loaders_alone() -> None:
    plain = DataLoader(_data(), batch_size=8)
    assert ddpify.unsharded(plain) is plain
    assert ddpify.unsharded(ddpify.distributed_loader(_data(), batch_size=8)).batch_size == 8


def test_workers_capped_at_the_process_share_of_cores(as_rank, capsys) -> None:  # type: ignore[no-untyped-def]
    as_rank(0, 2)
    cores = os.cpu_count() or 1
    loader = ddpify.distributed_loader(_data(), batch_size=8, num_workers=cores * 4)
    assert loader.num_workers == max(1, cores // 2)
    assert "num_workers" in capsys.readouterr().err
    few = ddpify.distributed_loader(_data(), batch_size=8, num_workers=1)
    assert few.num_workers == 1


def test_save_unwraps_models_inside_a_checkpoint_dict(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from ddpify.runtime import _io

    class FakeDDP(torch.nn.DataParallel):  # DataParallel is enough to exercise the unwrap
        pass

    inner = torch.nn.Linear(2, 2)
    path = tmp_path / "ckpt.pt"
    ddpify.save({"net": FakeDDP(inner), "epoch": 3}, path)
    saved = torch.load(path, weights_only=False)
    assert type(saved["net"]) is torch.nn.Linear and saved["epoch"] == 3
    assert _io._unwrapped(inner) is inner
