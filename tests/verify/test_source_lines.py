"""``ddpify verify`` on a single-GPU script runs a converted copy; its evidence names the
user's own lines (the copy's line map). No launch."""

from __future__ import annotations

from pathlib import Path

from ddpify.api import convert_source
from ddpify.verify import launch
from ddpify.verify.source_lines import LineMap

SOURCE = """import torch
from torch.utils.data import DataLoader, TensorDataset


def main():
    torch.manual_seed(0)
    loader = DataLoader(TensorDataset(torch.randn(32, 4)), batch_size=4, shuffle=True)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        for (x,) in loader:
            optimizer.zero_grad()
            model(x).sum().backward()
            optimizer.step()
        print(epoch)


if __name__ == "__main__":
    main()
"""


def user_line(text: str) -> int:
    return next(n for n, line in enumerate(SOURCE.splitlines(), 1) if text in line)


def converted_line(output: str, text: str) -> int:
    return next(n for n, line in enumerate(output.splitlines(), 1) if text in line)


def test_the_converted_copys_lines_name_the_users_lines() -> None:
    output = convert_source(SOURCE, filename="train.py").output
    lines = LineMap.between("train.py", SOURCE, output)
    loader, step = converted_line(output, "distributed_loader("), converted_line(output, "optimizer.step()")
    assert loader != user_line("DataLoader(") and step != user_line("optimizer.step()")  # the copy's lines moved
    assert lines.relabel(f"loader #0 (TensorDataset of 32, train.py:{loader})") == (
        f"loader #0 (TensorDataset of 32, train.py:{user_line('DataLoader(')})"
    )
    stepped = user_line("optimizer.step()")
    assert lines.relabel(f"SGD (train.py:{step}) at train.py:{step}") == f"SGD (train.py:{stepped}) at train.py:{stepped}"
    wrap = converted_line(output, "prepare_model(")
    assert lines.relabel(f"Linear (train.py:{wrap})") == f"Linear (a line ddpify added after train.py:{user_line('optimizer = ')})"
    assert lines.relabel(f"other_train.py:{step}, train.pyc:{step}") == f"other_train.py:{step}, train.pyc:{step}"


def test_verify_prepares_a_line_map_only_for_a_script_it_converts(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(SOURCE, encoding="utf-8")
    folder = tmp_path / "copy"
    folder.mkdir()
    runnable, lines = launch.prepare(script, folder)
    assert runnable == folder / "train.py" and lines is not None and lines.name == "train.py"
    assert launch.prepare(runnable, tmp_path) == (runnable, None)  # already converted: run as it is
