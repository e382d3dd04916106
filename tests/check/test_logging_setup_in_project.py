"""Issue 21: a standard logger prints on every rank where the process's logging setup gives the
root logger a console handler on every rank, wherever that setup is: a project helper the file
calls (BERT-NER's ``init_logger``: ``logger.handlers = [console]``, the module's ``logger``
imported), or, for a module with no setup of its own, the entry script importing it (CvT's
``tools/train.py`` through ``create_logger``; a ``basicConfig`` at the top of an ``mp.spawn``
script, which every spawned worker runs again). Not reported: a setup some rank test quiets,
here or in the importer (``setLevel`` by rank, a filter on the rank as in mace's
``setup_logger``, a helper muting the loggers it is handed off the main process as in seamless's
``init_distributed``), a console handler of its own higher level, a setup writing a file only."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_INIT_LOGGER = """\
import logging

logger = logging.getLogger()


def init_logger(log_file=None):
    logger = logging.getLogger()
    logger.setLevel(logging.INFO)
    console_handler = logging.StreamHandler()
    {handler_level}
    logger.handlers = [console_handler]
    {muted}
    return logger
"""

_TRAIN = """\
import torch.distributed as dist

from tools.common import init_logger, logger


def main(args):
    dist.init_process_group("nccl")
    init_logger(log_file="train.log")
    logger.info("***** Running training *****")
"""


def _findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], checked: str) -> list[int]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return [f.line for f in check_source(files[checked], checked, rules=select_rules(["DDP012"])).findings]


@pytest.mark.parametrize(
    ("handler_level", "muted", "reported"),
    [
        ("", "", True),
        ("console_handler.setLevel(logging.DEBUG)", "", True),
        ("console_handler.setLevel(logging.WARNING)", "", False),
        ("", "logger.addFilter(lambda record: dist.get_rank() == 0)", False),
        ("", "if dist.get_rank() != 0:\n        logger.setLevel(logging.ERROR)", False),
    ],
)
def test_a_project_helper_gives_the_root_logger_a_console(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, handler_level: str, muted: str, reported: bool
) -> None:
    helper = "import torch.distributed as dist\n" + _INIT_LOGGER.format(handler_level=handler_level, muted=muted)
    files = {"tools/__init__.py": "", "tools/common.py": helper, "train.py": _TRAIN}
    assert _findings(tmp_path, monkeypatch, files, "train.py") == ([9] if reported else [])


_LIBRARY = """\
import logging

logger = logging.getLogger(__name__)


def train_one_epoch(model, loader):
    for i, batch in enumerate(loader):
        loss = model(batch)
        loss.backward()
        logger.info("step %d loss %.3f", i, loss.item())
"""

_ENTRY = """\
import logging
import sys

import torch.multiprocessing as mp
import torch.distributed as dist

from core.function import train_one_epoch

{config}


def worker(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    {quiet}
    train_one_epoch(model, loader)


if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
"""


@pytest.mark.parametrize(
    ("config", "quiet", "reported"),
    [
        ("logging.basicConfig(stream=sys.stdout, level=logging.INFO)", "", True),
        ("logging.basicConfig(handlers=[logging.StreamHandler(sys.stdout)], level=logging.INFO)", "", True),
        ("logging.basicConfig(filename='train.log', level=logging.INFO)", "", False),
        ("logging.basicConfig(stream=sys.stdout, level=logging.WARNING)", "", False),
        (
            "logging.basicConfig(stream=sys.stdout, level=logging.INFO)",
            "logging.getLogger().setLevel(logging.INFO if rank == 0 else logging.ERROR)",
            False,
        ),
        (
            "logging.basicConfig(stream=sys.stdout, level=logging.INFO)",
            "logging.getLogger('transformers').setLevel(logging.INFO if rank == 0 else logging.ERROR)",
            True,
        ),
    ],
)
def test_the_entry_script_sets_up_logging_for_the_module_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, quiet: str, reported: bool
) -> None:
    files = {"core/__init__.py": "", "core/function.py": _LIBRARY, "main.py": _ENTRY.format(config=config, quiet=quiet)}
    assert _findings(tmp_path, monkeypatch, files, "core/function.py") == ([10] if reported else [])


_MUTING = """\
import logging

import torch.distributed as dist


def init_distributed(loggers):
    dist.init_process_group("nccl")
    if dist.get_rank() != 0:
        for to_mute in loggers:
            to_mute.setLevel(logging.ERROR)
"""

_FINETUNE = """\
import logging

import dist_utils
import trainer

logging.basicConfig(level=logging.INFO)
logger = logging.getLogger("finetune")


def main():
    dist_utils.init_distributed([logger, trainer.logger])
    trainer.train()
"""


def test_an_importer_muting_the_loggers_off_the_main_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """seamless's finetune.py hands trainer.logger to a helper that mutes it on ranks > 0."""
    files = {"dist_utils.py": _MUTING, "finetune.py": _FINETUNE, "trainer.py": _LIBRARY.replace("train_one_epoch(model, loader)", "train()")}
    assert _findings(tmp_path, monkeypatch, files, "trainer.py") == []
    files["finetune.py"] = _FINETUNE.replace("dist_utils.init_distributed([logger, trainer.logger])", "dist_utils.dist.init_process_group('nccl')")
    assert _findings(tmp_path, monkeypatch, files, "trainer.py") == [10]


_OWN_SETUP = """\
import logging

import torch.distributed as dist

logger = logging.getLogger(__file__)


def train(args, model, loader):
    for batch in loader:
        model(batch).backward()
        logger.info("loss")


def main(args):
    logging.basicConfig({level})
    dist.init_process_group("nccl")
    train(args, model, loader)
"""

_INTERACT = """\
import logging

from train import train

logging.basicConfig(level=logging.INFO)
"""


@pytest.mark.parametrize(
    ("level", "reported"),
    [
        ("level=logging.INFO if args.local_rank in [-1, 0] else logging.WARN", False),  # ddp21j transfer-learning-conv-ai
        ("level=logging.INFO if dist.get_rank() == 0 else logging.ERROR", False),
        ("level=logging.INFO", True),
    ],
)
def test_a_level_the_rank_chooses_quiets_the_other_ranks_whatever_importers_set_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, level: str, reported: bool
) -> None:
    """The file's own ``basicConfig`` level picked by a rank test (INFO on the main process,
    WARN elsewhere) is the setup of its DDP run; a one-process script importing it (an
    interactive demo at INFO) says nothing of that run."""
    files = {"train.py": _OWN_SETUP.format(level=level), "interact.py": _INTERACT}
    assert _findings(tmp_path, monkeypatch, files, "train.py") == ([11] if reported else [])
