"""Issue 21: a function whose decorator runs it on some ranks only (``@master_only``,
``@rank_zero_only``, ``@accelerator.on_main_process``, a decorator of the file or of the
project that calls the function it wraps behind a rank test) prints, saves and logs on those
ranks only, and a collective inside it runs on those ranks only. A decorator that calls what
it wraps on every rank (a timer) restricts nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import functools

import torch
import torch.distributed as dist
{imports}

{decorator}

{use}
def report(model, epoch):
    print(f"epoch {{epoch}}")
    torch.save(model.state_dict(), "last.pt")


def main():
    dist.init_process_group("gloo")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    for epoch in range(3):
        report(model.module, epoch)


if __name__ == "__main__":
    main()
"""

_GUARDED_CALL = """\
def master_only(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if dist.get_rank() == 0:
            return func(*args, **kwargs)
    return wrapper"""

_EARLY_EXIT = """\
def rank_zero(fn):
    def inner(*args, **kwargs):
        rank = dist.get_rank() if dist.is_initialized() else 0
        if rank != 0:
            return None
        return fn(*args, **kwargs)
    return inner"""

_CONDITIONAL = """\
def is_main_process():
    return not dist.is_initialized() or dist.get_rank() == 0


def main_only(f):
    return lambda *a, **k: f(*a, **k) if is_main_process() else None"""

_TIMER = """\
def timed(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        import time
        start = time.time()
        result = func(*args, **kwargs)
        print(time.time() - start)
        return result
    return wrapper"""


def _lines(source: str, path: str = "train.py") -> set[tuple[str, int]]:
    found = check_source(source, path, rules=select_rules(["DDP005", "DDP012", "DDP027"])).findings
    return {(f.code, f.line) for f in found}


def _script(imports: str = "", decorator: str = "", use: str = "") -> str:
    return _SCRIPT.format(imports=imports, decorator=decorator, use=use)


def _report_lines(source: str) -> tuple[int, int]:
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines, 1) if line.startswith("def report"))
    return start + 1, start + 2


@pytest.mark.parametrize(
    ("imports", "decorator", "use", "restricted"),
    [
        ("", _GUARDED_CALL, "@master_only", True),
        ("", _EARLY_EXIT, "@rank_zero", True),
        ("", _CONDITIONAL, "@main_only", True),
        ("from pytorch_lightning.utilities import rank_zero_only", "", "@rank_zero_only", True),
        ("from lightning.pytorch.utilities.rank_zero import rank_zero_only as only_zero", "", "@only_zero", True),
        ("from mmcv.runner import master_only", "", "@master_only", True),
        ("from accelerate import Accelerator\naccelerator = Accelerator()", "", "@accelerator.on_main_process", True),
        ("from somewhere_unreadable import master_only", "", "@master_only", True),  # by its name
        ("", _TIMER, "@timed", False),
        ("", "", "@torch.no_grad()", False),
        ("", "", "", False),
    ],
)
def test_a_rank_decorator_restricts_the_function_it_wraps(imports: str, decorator: str, use: str, restricted: bool) -> None:
    source = _script(imports, decorator, use)
    print_line, save_line = _report_lines(source)
    found = _lines(source)
    assert (("DDP012", print_line) in found) is not restricted
    assert (("DDP005", save_line) in found) is not restricted


def test_a_timer_still_prints_on_every_rank_itself() -> None:
    source = _script("", _TIMER, "@timed")
    timer_print = source.splitlines().index("        print(time.time() - start)") + 1
    assert ("DDP012", timer_print) in _lines(source)


def test_a_collective_inside_a_rank_zero_function_is_rank_asymmetric() -> None:
    source = _script("", _GUARDED_CALL, "@master_only").replace(
        '    print(f"epoch {epoch}")', '    print(f"epoch {epoch}")\n    dist.barrier()'
    )
    barrier = source.splitlines().index("    dist.barrier()") + 1
    assert ("DDP027", barrier) in _lines(source)


_DIST_UTILS = """\
import functools

import torch.distributed as dist


def get_dist_info():
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def master_only(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        rank, _ = get_dist_info()
        if rank == 0:
            return func(*args, **kwargs)
    return wrapper


def every_rank(func):
    return func
"""


@pytest.mark.parametrize(("imports", "use", "restricted"), [
    ("from utils.dist_utils import master_only", "@master_only", True),
    ("from utils import dist_utils", "@dist_utils.master_only", True),
    ("from utils.dist_utils import every_rank as master_only", "@master_only", False),  # read, not named
])
def test_a_decorator_of_the_project_is_read(tmp_path: Path, imports: str, use: str, restricted: bool) -> None:
    (tmp_path / "utils").mkdir()
    (tmp_path / "utils" / "__init__.py").touch()
    (tmp_path / "utils" / "dist_utils.py").write_text(_DIST_UTILS, encoding="utf-8")
    (tmp_path / "setup.py").touch()
    script = tmp_path / "train.py"
    source = _script(imports, "", use)
    script.write_text(source, encoding="utf-8")
    print_line, _ = _report_lines(source)
    assert (("DDP012", print_line) in _lines(source, str(script))) is not restricted
