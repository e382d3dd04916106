"""Runtime helpers that scripts converted by ddpify call (``import ddpify.runtime as ddpify``).

This is the only part of ddpify that imports torch: the converter itself stays torch-free so it
can run anywhere, while converted scripts already depend on torch.

Every helper is a no-op (or the plain PyTorch call) when the script runs as a single process
without a launcher, so ``python train.py`` keeps behaving like the original script, and does
the DDP-correct thing under ``torchrun``.
"""

from ._batches import batch_part
from ._data import EpochDataLoader, distributed_loader, set_epoch, shard, unsharded
from ._env import Env, detect_env
from ._io import NullObject, load, print, rank_zero, save
from ._logging import rank_zero_logging
from ._metrics import all_ranks, any_rank, mean_over_ranks
from ._model import load_state_dict, prepare_model, prepare_trained, sync_gradients, through_ddp, unwrap, wrapped
from ._per_process import agreed, device_from, shared_mkdtemp, shared_temporary_directory
from ._process_group import (
    DeviceName,
    barrier,
    device,
    device_name,
    distributed,
    is_distributed,
    is_main_process,
    local_rank,
    local_rank_argument,
    rank,
    setup,
    teardown,
    world_size,
)
from ._seed import main_process_first, rank_generator, rank_random, seed, switch_to_rank_seeds

__all__ = [
    "Env",
    "detect_env",
    "setup",
    "teardown",
    "distributed",
    "is_distributed",
    "rank",
    "local_rank",
    "local_rank_argument",
    "world_size",
    "is_main_process",
    "device",
    "device_name",
    "DeviceName",
    "barrier",
    "agreed",
    "mean_over_ranks",
    "any_rank",
    "all_ranks",
    "distributed_loader",
    "EpochDataLoader",
    "set_epoch",
    "shard",
    "unsharded",
    "batch_part",
    "prepare_model",
    "prepare_trained",
    "sync_gradients",
    "unwrap",
    "wrapped",
    "through_ddp",
    "load_state_dict",
    "save",
    "load",
    "print",
    "rank_zero",
    "NullObject",
    "seed",
    "switch_to_rank_seeds",
    "main_process_first",
    "rank_zero_logging",
    "shared_mkdtemp",
    "shared_temporary_directory",
    "device_from",
    "rank_generator",
    "rank_random",
]
