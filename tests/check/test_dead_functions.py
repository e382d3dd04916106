"""Issue 21: a function that a script (a file with a ``__main__`` block) never calls, and that no
other file of its project imports, never runs: a print or a save in it is no finding. A file the
project imports, or a module without a ``__main__`` block, may have its functions called from
elsewhere: they keep their findings, unless the only files that call them run as one process
(no distributed code at all: an evaluation script)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.check.engine import check_source, select_rules

_SCRIPT = """\
import torch
import torch.distributed as dist


def validation(model, loader):
    for x in loader:
        print(model(x).mean())


def main():
    dist.init_process_group("gloo")
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
    print("start")
{main_block}
"""


@pytest.mark.parametrize(
    ("main_block", "importer", "dead"),
    [
        ('\nif __name__ == "__main__":\n    main()', None, True),
        ('\nif __name__ == "__main__":\n    main()', "from train import validation\n", False),
        ('\nif __name__ == "__main__":\n    main()', 'import torch.distributed as dist\nimport train\n\ndist.init_process_group("gloo")\ntrain.validation(None, [])\n', False),
        # called only by a script with no distributed code: one process runs it, no copies per rank
        ('\nif __name__ == "__main__":\n    main()', "import train\n\ntrain.validation(None, [])\n", True),
        ("", None, False),  # a module: its functions are called from elsewhere
    ],
)
def test_a_function_the_script_never_calls_never_runs(tmp_path: Path, main_block: str, importer: str | None, dead: bool) -> None:
    (tmp_path / "setup.py").touch()
    if importer is not None:
        (tmp_path / "evaluate.py").write_text(importer, encoding="utf-8")
    source = _SCRIPT.format(main_block=main_block)
    script = tmp_path / "train.py"
    script.write_text(source, encoding="utf-8")
    lines = {f.line for f in check_source(source, str(script), rules=select_rules(["DDP012"])).findings}
    assert (7 in lines) is not dead
    assert 13 in lines  # main() still prints on every rank
