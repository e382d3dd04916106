"""DDP034 where the spawn and the seed are spelled by others: a detectron2-style ``launch``
helper of the project hands the worker to ``mp.spawn`` inside ``args=`` (VQ-Diffusion), and
library helpers seed every RNG (``torch_geometric.seed_everything``, ``transformers.set_seed``:
ogb). A seed in the launching process is lost either way; one in the worker is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_LAUNCH = """\
import torch.distributed as dist
import torch.multiprocessing as mp


def _distributed_worker(local_rank, main_func, world_size, dist_url, args):
    dist.init_process_group("nccl", init_method=dist_url, world_size=world_size, rank=local_rank)
    main_func(local_rank, *args)


def launch(main_func, num_gpus, dist_url=None, args=()):
    if num_gpus > 1:
        mp.spawn(_distributed_worker, nprocs=num_gpus, args=(main_func, num_gpus, dist_url, args), daemon=False)
    else:
        main_func(0, *args)
"""
_SCRIPT = """\
import torch
import torch.distributed as dist
{imports}


def main_worker(local_rank, args):
    if not dist.is_initialized():
        dist.init_process_group("nccl", rank=local_rank, world_size=2)
    {worker_seed}
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.1))


def main():
    args = get_args()
    {parent_seed}
    {start}


if __name__ == "__main__":
    main()
"""


def _lines(tmp_path: Path, **parts: str) -> list[int]:
    """The lines reported, 0 standing for the line of the launching process's seed."""
    (tmp_path / "launch.py").write_text(_LAUNCH, encoding="utf-8")
    script = tmp_path / "train.py"
    text = _SCRIPT.format(**parts)
    script.write_text(text, encoding="utf-8")
    seed_line = text[: text.index(parts["parent_seed"])].count("\n") + 1
    found = check_source(text, str(script), rules=select_rules(["DDP034"])).findings
    return [f.line - seed_line for f in found]


@pytest.mark.parametrize(
    ("imports", "parent_seed", "start"),
    [
        ("from launch import launch", "torch.manual_seed(args.seed)", "launch(main_worker, 2, args=(args,))"),
        ("import launch", "torch.manual_seed(args.seed)", "launch.launch(main_worker, 2, args=(args,))"),
        (
            "import torch.multiprocessing as mp\nfrom torch_geometric import seed_everything",
            "seed_everything(42)",
            "mp.spawn(main_worker, args=(args,), nprocs=2)",
        ),
        (
            "import torch.multiprocessing as mp\nimport transformers",
            "transformers.set_seed(args.seed)",
            "mp.spawn(main_worker, args=(args,), nprocs=2)",
        ),
    ],
)
def test_a_seed_in_the_launching_process(tmp_path: Path, imports: str, parent_seed: str, start: str) -> None:
    assert _lines(tmp_path, imports=imports, parent_seed=parent_seed, start=start, worker_seed="pass") == [0]
    seeded_worker = _lines(tmp_path, imports=imports, parent_seed=parent_seed, start=start, worker_seed="torch.manual_seed(args.seed + local_rank)")
    assert seeded_worker == ([] if "torch" in parent_seed else [0])  # the library seeds numpy and random too


def test_a_launch_helper_that_runs_its_argument_in_this_process_starts_nothing(tmp_path: Path) -> None:
    """A helper that only calls what it is handed (no spawn) is no launcher: the seed reaches it."""
    (tmp_path / "launch.py").write_text("def launch(main_func, args=()):\n    main_func(0, *args)\n", encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(
        _SCRIPT.format(imports="from launch import launch", parent_seed="torch.manual_seed(args.seed)", start="launch(main_worker, args=(args,))", worker_seed="pass"),
        encoding="utf-8",
    )
    assert not check_source(script.read_text(encoding="utf-8"), str(script), rules=select_rules(["DDP034"])).findings
