"""DDP004 through the project's own modules: a ``load_checkpoint(model, path)`` helper of a
sibling module that ``torch.load``s without ``map_location`` puts rank 0's cuda:0 tensors on
GPU 0 of every rank that calls it (NVIDIA's SSD). Reported at the call, where it runs on every
rank; not for a helper that maps, nor one whose load depends on what its caller passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_HELPERS = """\
import pickle
import random

import numpy as np
import torch
import torch.distributed as dist


def load_checkpoint(model, checkpoint):
    od = torch.load(checkpoint)
    model.load_state_dict(od["model"])


def load_mapped(model, checkpoint):
    model.load_state_dict(torch.load(checkpoint, map_location="cpu")["model"])


def load_worker_state(ckpt_dir):
    rank = 0 if not dist.is_initialized() else dist.get_rank()
    worker_state = torch.load(ckpt_dir / f"worker_{rank}.pt")  # the file this rank saved
    model_state = worker_state["model"]
    return model_state


def load_rng_states(path):
    state = torch.load(path)  # random-number states only: CPU tensors whatever device saved them
    torch.random.set_rng_state(state["rng_torch_cpu"])
    torch.cuda.set_rng_state(state["rng_torch_gpu"])
    np.random.set_state(state["rng_np"])
    random.setstate(state["rng_python"])


def load_rng_and_weights(path):
    state = torch.load(path)
    torch.cuda.set_rng_state(state["rng_torch_gpu"])
    return state["model"]


def read_pkl(path, use_torch=False):
    if use_torch:
        return torch.load(path)
    with open(path, "rb") as handle:
        return pickle.load(handle)
"""
_SCRIPT = """\
import torch
import torch.distributed as dist
from utils import load_checkpoint, load_mapped, load_rng_and_weights, load_rng_states, load_worker_state, read_pkl

dist.init_process_group("nccl")
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4))
{call}
"""


@pytest.mark.parametrize(
    ("call", "found"),
    [
        ("load_checkpoint(model.module, args.checkpoint)", [7]),
        ("if args.checkpoint is not None:\n    load_checkpoint(model.module, args.checkpoint)", [8]),
        ("if dist.get_rank() == 0:\n    load_checkpoint(model.module, args.checkpoint)", []),
        ("load_mapped(model.module, args.checkpoint)", []),
        ("state = read_pkl(args.checkpoint, use_torch=True)", []),
        ("state = load_worker_state(args.checkpoint)", []),
        ("load_rng_states(args.checkpoint)", []),
        ("weights = load_rng_and_weights(args.checkpoint)", [7]),
    ],
)
def test_a_project_helper_loading_without_map_location(tmp_path: Path, call: str, found: list[int]) -> None:
    (tmp_path / "utils.py").write_text(_HELPERS, encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT.format(call=call), encoding="utf-8")
    findings = check_source(script.read_text(encoding="utf-8"), str(script), rules=select_rules(["DDP004"])).findings
    assert [f.line for f in findings] == found
    assert all("() (another file)" in f.message for f in findings)
