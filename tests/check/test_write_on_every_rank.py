"""DDP037 (write-on-every-rank, opt-in: see its known false positives): set-up and logging code that writes, creates or removes
one path on every rank at once, in several spellings; quiet where only one rank runs it (a rank
test here or at every call, the ``mp.spawn`` parent), where the path is per rank or per process,
or where the call tolerates the others (``exist_ok=True``, ``ignore_errors=True``, a ``try``)."""

from __future__ import annotations

import pytest

from ddpify.check.engine import check_source, select_rules

_RULES = select_rules(["DDP037"])
_HEAD = "import os\nimport shutil\nimport torch.distributed as dist\nfrom os import makedirs\n\ndist.init_process_group('nccl')\n"


@pytest.mark.parametrize(
    ("code", "reported"),
    [
        ("log = open(os.path.join(out, 'log.txt'), mode='a')", True),
        ("makedirs(out)", True),
        ("os.makedirs(out, exist_ok=False)", True),
        ("os.rename(tmp, out)", True),
        ("shutil.copytree('src', os.path.join(out, 'code'))", True),
        ("shutil.copytree('src', out, dirs_exist_ok=True)", False),
        ("os.makedirs(out, exist_ok=True)", False),
        ("log = open(os.path.join(out, 'log.txt'), 'r+')", False),
        ("shutil.rmtree(out, ignore_errors=True)", False),
        ("log = open(f'log{dist.get_rank()}.txt', 'w')", False),
        ("if dist.get_rank() == 0:\n    os.mkdir(out)", False),
    ],
)
def test_spellings(code: str, reported: bool) -> None:
    findings = check_source(_HEAD + code + "\n", "train.py", rules=_RULES).findings
    assert bool(findings) is reported, findings


def test_a_helper_every_call_of_which_is_rank_zero_only() -> None:
    source = _HEAD + (
        "\n\ndef dump(path):\n    with open(path, 'w') as f:\n        f.write('done')\n\n\n"
        "if dist.get_rank() == 0:\n    dump('out.txt')\n"
    )
    assert not check_source(source, "train.py", rules=_RULES).findings
    assert check_source(source + "dump('again.txt')\n", "train.py", rules=_RULES).findings


def test_the_spawning_parent_writes_once() -> None:
    source = (
        "import os\nimport torch.multiprocessing as mp\nfrom torch.nn.parallel import DistributedDataParallel as DDP\n\n\n"
        "def worker(rank):\n    model = DDP(net)\n\n\n"
        "if __name__ == '__main__':\n    os.mkdir('runs')\n    mp.spawn(worker, nprocs=2)\n"
    )
    assert not check_source(source, "train.py", rules=_RULES).findings


def test_not_a_ddp_script() -> None:
    assert not check_source("import os\nos.mkdir('runs')\n", "train.py", rules=_RULES).findings
