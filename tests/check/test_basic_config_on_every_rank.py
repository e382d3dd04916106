"""Issue 21: ``logging.basicConfig(level=logging.INFO)`` run by every process gives each rank a
console handler at INFO, so every unguarded ``logger.info(...)`` prints N times (DialoGPT's
LSP_train.py, CodeBERT, CMGAN, wenet in the judged corpora): DDP012 reports those calls. Not
reported: a level the rank decides (the Hugging Face examples' ``level=logging.INFO if
local_rank in [-1, 0] else logging.WARN``, a ``setLevel`` of the rank, a ``setLevel`` or
``logger.disabled = True`` under ``if rank != 0:``, also in a project helper that makes the
logger), a file-only
configuration, the default WARNING level, a call under a rank test, debug lines at INFO."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import logging

import torch.distributed as dist

{config}
logger = logging.getLogger(__name__)
dist.init_process_group("nccl")
rank = dist.get_rank()
{call}
"""


def _lines(config: str, call: str) -> list[int]:
    text = _SCRIPT.format(config=config, call=call)
    return [f.line for f in check_source(text, rules=select_rules(["DDP012"])).findings]


@pytest.mark.parametrize(
    ("config", "call"),
    [
        ("logging.basicConfig(format='%(message)s', level=logging.INFO)", "logger.info('world size %d', dist.get_world_size())"),
        ('logging.basicConfig(level="INFO")', "logging.info('starting')"),
        ("logging.basicConfig(level=logging.DEBUG)", "logger.debug('batch shapes')"),
    ],
)
def test_an_info_line_with_a_console_handler_on_every_rank(config: str, call: str) -> None:
    assert _lines(config, call) == [9]


@pytest.mark.parametrize(
    ("config", "call"),
    [
        ("logging.basicConfig(level=logging.INFO if dist.get_rank() == 0 else logging.WARN)", "logger.info('starting')"),
        ("logging.basicConfig(level=logging.INFO)\nlogging.getLogger().setLevel(logging.INFO if dist.get_rank() == 0 else logging.WARNING)", "logger.info('starting')"),
        ('logging.basicConfig(filename="train.log", level=logging.INFO)', "logger.info('starting')"),
        ("logging.basicConfig(format='%(message)s')", "logger.info('starting')"),
        ("logging.basicConfig(level=logging.INFO)", "if rank == 0:\n    logger.info('starting')"),
        ("logging.basicConfig(level=logging.INFO)", "logger.debug('batch shapes')"),
        ("logging.basicConfig(level=logging.INFO)\nif dist.get_rank() != 0:\n    logger.setLevel(logging.WARNING)", "logger.info('starting')"),
        ("logging.basicConfig(level=logging.INFO)\nif dist.get_rank() > 0:\n    logging.getLogger().disabled = True", "logger.info('starting')"),
    ],
)
def test_no_console_at_that_level_on_the_other_ranks(config: str, call: str) -> None:
    assert _lines(config, call) == []


_HELPER = """\
import logging


def create_logger(name, rank):
    logger = logging.getLogger(name)
    logger.addHandler(logging.StreamHandler())
    logger.setLevel(logging.INFO)
{quiet}    return logger
"""
_TRAIN = """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from log_utils import create_logger

dist.init_process_group("nccl")
logger = create_logger("train", dist.get_rank())
model = DDP(model)
logger.info("training")
"""


@pytest.mark.parametrize(
    ("quiet", "found"),
    [
        ("", [8]),  # a console handler at INFO on every rank
        ("    if rank != 0:\n        logger.disabled = True\n", []),
        ("    if rank != 0:\n        logger.setLevel(logging.ERROR)\n", []),
        ("    logger.setLevel(logging.INFO if rank == 0 else logging.WARNING)\n", []),
    ],
)
def test_a_project_logger_quieted_on_the_other_ranks(tmp_path: Path, quiet: str, found: list[int]) -> None:
    (tmp_path / "setup.py").touch()
    (tmp_path / "log_utils.py").write_text(_HELPER.format(quiet=quiet))
    script = tmp_path / "train.py"
    script.write_text(_TRAIN)
    assert [f.line for f in check_source(_TRAIN, str(script), rules=select_rules(["DDP012"])).findings] == found


_LEVELED = """\
import logging


def get_logger(name, level):
    logger = logging.getLogger(name)
    logger.setLevel(level)
    logger.addHandler(logging.StreamHandler())
    return logger
"""


@pytest.mark.parametrize(
    ("level", "found"),
    [("logging.INFO", [6]), ("logging.INFO if dist.get_rank() == 0 else logging.ERROR", [])],
)
def test_a_project_logger_handed_a_level_the_rank_decides(tmp_path: Path, level: str, found: list[int]) -> None:
    (tmp_path / "setup.py").touch()
    (tmp_path / "log_utils.py").write_text(_LEVELED)
    text = f'import torch.distributed as dist\nfrom log_utils import get_logger\n\ndist.init_process_group("nccl")\nlogger = get_logger("train", {level})\nlogger.info("training")\n'
    script = tmp_path / "train.py"
    script.write_text(text)
    assert [f.line for f in check_source(text, str(script), rules=select_rules(["DDP012"])).findings] == found
