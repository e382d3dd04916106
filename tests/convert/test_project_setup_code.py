"""Issue 20 (unseen20h's StyleGAN.pytorch): the set-up code around training, on every rank.

- A refusal to overwrite (``if os.path.exists(out): raise KeyError(...)`` before
  ``os.makedirs(out)``) gets ``ddpify.barrier()`` after the test: every rank tests before any
  creates the folder (else the first to create it makes the others refuse). Also
  ``sys.exit`` and ``Path.exists``; not a test behind a rank test, nor one nothing creates after.
- A project module's ``cfg = CN()`` of yacs: ``cfg.merge_from_file(f)`` is the library's
  method, not a project function with side effects to report.
- ``logger = make_logger(name, out_dir, "log")``, a project function returning a logger with a
  console and file handler on every rank: built on rank 0 only (``ddpify.rank_zero``).
- A class of the project that does nothing DDP cares about (a loss holding the model) is read,
  not an unknown: building it with the DDP model is no report item."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.api import convert_source

_TRAINING = """
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x in loader:
    model(x).mean().backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    ("refusal", "creation"),
    [
        ('if os.path.exists(out):\n    raise KeyError("Existing path: ", out)\n', "os.makedirs(out)\n"),
        ("if os.path.isdir(out):\n    sys.exit(1)\n", "os.mkdir(out)\n"),
        ('if Path(out).exists():\n    raise FileExistsError(out)\n', "Path(out).mkdir(parents=True)\n"),
    ],
)
def test_a_refusal_to_overwrite_is_tested_by_every_rank_before_any_creates(refusal: str, creation: str) -> None:
    text = "import os\nimport sys\nfrom pathlib import Path\n\nimport torch\n\nout = 'runs/exp'\n" + refusal + creation + _TRAINING
    result = convert_source(text)
    assert refusal.splitlines()[-1] + "\nddpify.barrier()\n" in result.output, result.output
    assert any("ddpify.barrier() after the test" in c.what for c in result.changes)
    assert convert_source(result.output).output == result.output


@pytest.mark.parametrize(
    "text",
    [
        "import os\n\nimport torch\n\nout = 'runs/exp'\nif os.path.exists(out):\n    raise KeyError(out)\n" + _TRAINING,  # nothing made
        "import os\n\nimport torch\nimport torch.distributed as dist\n\nout = 'runs/exp'\nif dist.get_rank() == 0:\n"
        "    if os.path.exists(out):\n        raise KeyError(out)\n    os.makedirs(out)\n" + _TRAINING,  # one rank tests
    ],
)
def test_no_barrier_without_a_creation_or_behind_a_rank_test(text: str) -> None:
    assert "ddpify.barrier()" not in convert_source(text).output


def test_library_objects_logger_helpers_and_quiet_project_classes(tmp_path: Path) -> None:
    (tmp_path / "config.py").write_text("from yacs.config import CfgNode as CN\n\ncfg = CN()\ncfg.output_dir = 'out'\n")
    (tmp_path / "logger.py").write_text(
        "import logging\nimport os\nimport sys\n\n\ndef make_logger(name, save_dir, save_filename):\n"
        "    logger = logging.getLogger(name)\n    logger.addHandler(logging.StreamHandler(stream=sys.stdout))\n"
        "    logger.addHandler(logging.FileHandler(os.path.join(save_dir, save_filename + '.txt'), mode='w'))\n"
        "    return logger\n"
    )
    (tmp_path / "losses.py").write_text(
        "class LogisticGAN:\n    def __init__(self, dis):\n        self.dis = dis\n\n    def dis_loss(self, x):\n        return self.dis(x).mean()\n"
    )
    text = """\
import torch

from config import cfg as opt
from logger import make_logger
from losses import LogisticGAN


def main(args, loader):
    opt.merge_from_file(args.config)
    opt.freeze()
    logger = make_logger("project", opt.output_dir, "log")
    dis = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(dis.parameters(), lr=0.1)
    loss = LogisticGAN(dis)
    for x in loader:
        loss.dis_loss(x).backward()
        optimizer.step()
        logger.info("step")
"""
    script = tmp_path / "train.py"
    script.write_text(text)
    result = convert_source(text, filename=str(script))
    assert 'logger = ddpify.rank_zero(make_logger)("project", opt.output_dir, "log")' in result.output
    assert "opt.merge_from_file(args.config)\n" in result.output
    assert not any("merge_from_file" in m.why or "freeze" in m.why or "LogisticGAN" in m.why for m in result.manual), result.manual
