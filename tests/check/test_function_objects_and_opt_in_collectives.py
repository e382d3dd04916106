"""Issue 21 (mlcommons unet3d, judged false twice): ``if is_main_process:`` names the function
without calling it, so the test is always true and no rank test: what runs under it runs on
every rank (a print there is reported, a collective there is no asymmetry). And a project
helper whose collective runs only when its caller asks (``def log(msg, sync=False): if sync:
barrier()``, mlperf's ``if kwargs.pop("sync", False):``) runs none on a call that does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_UTILS = """\
import torch.distributed as dist


def is_main_process():
    return dist.get_rank() == 0


def barrier():
    dist.all_reduce(torch.zeros(1))


def log_event(*args, **kwargs):
    if kwargs.pop("sync", False):
        barrier()
    print(*args)


def log_line(message, sync=False):
    if sync:
        dist.barrier()
    print(message)


def log_always(message, sync=True):
    if sync:
        dist.barrier()
    print(message)
"""

_SCRIPT = """\
import torch.distributed as dist
from utils import is_main_process, log_always, log_event, log_line

dist.init_process_group("nccl")
{code}
"""


def _codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str, rules: list[str]) -> list[tuple[str, int]]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "utils.py").write_text(_UTILS)
    text = _SCRIPT.format(code=code)
    (tmp_path / "train.py").write_text(text)
    monkeypatch.chdir(tmp_path)
    return [(f.code, f.line) for f in check_source(text, "train.py", rules=select_rules(rules)).findings]


@pytest.mark.parametrize(
    ("code", "found"),
    [
        ("if is_main_process:\n    log_event(key='init')", []),
        ("if is_main_process:\n    log_line('init')", []),
        ("if is_main_process():\n    log_event(key='init', sync=True)", [("DDP027", 6)]),
        ("if is_main_process():\n    log_line('init', sync=True)", [("DDP027", 6)]),
        ("if is_main_process():\n    log_always('init')", [("DDP027", 6)]),
    ],
)
def test_collectives_under_a_function_object_and_opt_in_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str, found: list[tuple[str, int]]
) -> None:
    assert _codes(tmp_path, monkeypatch, code, ["DDP027"]) == found


def test_a_print_under_a_function_object_runs_on_every_rank(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _codes(tmp_path, monkeypatch, "if is_main_process:\n    print('init')", ["DDP012"]) == [("DDP012", 6)]
    assert _codes(tmp_path, monkeypatch, "if is_main_process():\n    print('init')", ["DDP012"]) == []


def test_a_parameter_of_that_name_is_a_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``def report(is_main_process): if is_main_process: ...``: the caller's flag, not the function."""
    code = "def report(is_main_process):\n    if is_main_process:\n        print('done')\n\n\nreport(dist.get_rank() == 0)"
    assert _codes(tmp_path, monkeypatch, code, ["DDP012"]) == []
