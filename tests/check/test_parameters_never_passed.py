"""A branch on a parameter that defaults to False (or None) and that no caller passes never
runs (SevenNet's ``run_one_epoch(..., wrap_tqdm=False)``: its progress bar is dead code, the
callers in other files of the project never set it). A caller that passes it, here or in an
importing file, makes the branch live again."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_TRAINER = """\
import torch.distributed as dist
from tqdm import tqdm


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def run_one_epoch(self, loader, is_train, wrap_tqdm=False):
        if wrap_tqdm:
            loader = tqdm(loader)
        for batch in loader:
            if is_train:
                self.model(batch).sum().backward()
                self.optimizer.step()
"""
_DRIVER = """\
import torch.distributed as dist
from trainer import Trainer

dist.init_process_group("nccl")
trainer = Trainer(model, optimizer)
for epoch in range(10):
    trainer.run_one_epoch(train_loader, True{extra})
"""


@pytest.mark.parametrize(("extra", "reported"), [("", False), (", wrap_tqdm=True", True), (", False, args.progress", True)])
def test_a_flag_no_caller_sets(tmp_path: Path, extra: str, reported: bool) -> None:
    (tmp_path / "trainer.py").write_text(_TRAINER, encoding="utf-8")
    (tmp_path / "driver.py").write_text(_DRIVER.format(extra=extra), encoding="utf-8")
    trainer = tmp_path / "trainer.py"
    findings = check_source(trainer.read_text(encoding="utf-8"), str(trainer), rules=select_rules(["DDP012"])).findings
    assert bool(findings) is reported


_LOGGER = """\
import logging


def get_logger(log_dir=None, log_file=None):
    logger = logging.getLogger()
    logger.setLevel(logging.INFO)
    if log_dir and log_file:
        file_handler = logging.FileHandler(log_file)
        file_handler.setLevel(logging.INFO)
        logger.addHandler(file_handler)
    logger.addHandler(logging.StreamHandler())
    return logger
"""
_ENGINE = """\
import torch.distributed as dist
from logger import get_logger

logger = get_logger()


class Engine:
    def __init__(self):
        dist.init_process_group("nccl")
        logger.info("engine ready")
"""


def test_a_dead_branch_is_no_rank_test(tmp_path: Path) -> None:
    """TorchSeg's ``get_logger()``: the file handler's ``setLevel`` sits in a branch no call
    takes; that makes it dead code, not a level some ranks set, and the console handler prints
    on every rank."""
    (tmp_path / "logger.py").write_text(_LOGGER, encoding="utf-8")
    engine = tmp_path / "engine.py"
    engine.write_text(_ENGINE, encoding="utf-8")
    findings = check_source(engine.read_text(encoding="utf-8"), str(engine), rules=select_rules(["DDP012"])).findings
    assert [f.line for f in findings] == [10]
