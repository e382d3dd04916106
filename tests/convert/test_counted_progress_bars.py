"""Issue 20: a tqdm bar whose count the script reads (``pbar.n``) is not disabled off rank 0
(a disabled bar counts nothing there); it is reported instead."""

from __future__ import annotations

from ddpify.api import convert_source

_HEAD = """\
import torch
from torch.utils.data import DataLoader, TensorDataset

loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8, shuffle=True)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""


def test_a_progress_bar_whose_count_is_read_stays_on_every_rank() -> None:
    """unseen20g's flow script divided by ``pbar.n``: a bar disabled off rank 0 counts nothing
    there (ZeroDivisionError on rank 1). Such a bar is left as written and reported; a bar
    whose count nothing reads is still shown on rank 0 only."""
    body = """
from tqdm import tqdm
for epoch in range(2):
    pbar = tqdm(total=len(loader.dataset))
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * x.size(0)
        pbar.update(x.size(0))
    print(total / pbar.n)
    for x, y in tqdm(loader):
        pass
"""
    result = convert_source(_HEAD + body)
    assert "pbar = tqdm(total=len(loader.dataset))\n" in result.output, result.output
    assert "tqdm(loader, disable=not ddpify.is_main_process())" in result.output, result.output
    assert [m for m in result.manual if "pbar.n" in m.why], result.manual


def test_a_bar_of_the_same_name_in_another_function_is_another_bar() -> None:
    """unseen20g's flows script: ``train()``'s ``pbar`` is never read, ``validate()``'s is
    (``pbar.n``): only the validation bar stays on every rank."""
    body = """
from tqdm import tqdm


def train():
    pbar = tqdm(total=len(loader.dataset))
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        pbar.update(x.size(0))


def validate():
    pbar = tqdm(total=len(loader.dataset))
    total = 0.0
    for x, y in loader:
        total += torch.nn.functional.mse_loss(model(x), y).item() * x.size(0)
        pbar.update(x.size(0))
    return total / pbar.n


train()
validate()
"""
    result = convert_source(_HEAD + body)
    assert result.output.count("pbar = tqdm(total=len(loader.dataset), disable=not ddpify.is_main_process())") == 1, result.output
    assert len([m for m in result.manual if "pbar.n" in m.why]) == 1, result.manual
