"""A driver file (it builds the model and hands it to a trainer of another file, minGPT's
chargpt.py) and that trainer's file, both converted: the driver still runs as plain ``python``
(one process), and under torchrun (2 CPU processes, gloo) its callback's prints and save happen
once, by rank 0, while the trainer's model is wrapped and its loader sharded."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from ddpify.api import convert_source

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import run_script  # noqa: E402

TRAINER = """\
import torch
from torch.utils.data import DataLoader


class Trainer:
    def __init__(self, model, dataset, epochs=2):
        self.model = model.to("cpu")
        self.dataset = dataset
        self.epochs = epochs
        self.callbacks = []

    def add_callback(self, callback):
        self.callbacks.append(callback)

    def run(self):
        loader = DataLoader(self.dataset, batch_size=8, shuffle=True)
        optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        for epoch in range(self.epochs):
            for x, y in loader:
                optimizer.zero_grad()
                torch.nn.functional.mse_loss(self.model(x), y).backward()
                optimizer.step()
            for callback in self.callbacks:
                callback(epoch)
"""

DRIVER = """\
import torch
from torch.utils.data import TensorDataset

from trainer import Trainer

if __name__ == "__main__":
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(32, 4), torch.randn(32, 1))
    model = torch.nn.Linear(4, 1)
    trainer = Trainer(model, dataset)

    def epoch_end(epoch):
        with torch.no_grad():
            print("EPOCH-END", epoch, float(model(torch.ones(1, 4))))
        torch.save(model.state_dict(), "model.pt")

    trainer.add_callback(epoch_end)
    trainer.run()
    print("DONE")
"""


def _converted(tmp_path: Path) -> Path:
    """Both files converted into ``tmp_path``; the driver's path."""
    driver = convert_source(DRIVER)
    assert "ddpify.distributed()" in driver.output and any("Trainer() (trainer, another file)" in m.why for m in driver.manual)
    trainer = convert_source(TRAINER)
    assert "ddpify.prepare_model(" in trainer.output and "ddpify.distributed_loader(" in trainer.output
    (tmp_path / "trainer.py").write_text(trainer.output)
    (tmp_path / "driver.py").write_text(driver.output)
    return tmp_path / "driver.py"


def test_converted_driver_runs_as_one_process(tmp_path: Path) -> None:
    run = run_script(_converted(tmp_path), nproc=None, cwd=tmp_path, timeout=120, trace=False).assert_ok()
    assert run.stdout.count("EPOCH-END") == 2 and run.stdout.count("DONE") == 1
    assert set(torch.load(tmp_path / "model.pt")) == {"weight", "bias"}


@pytest.mark.torchrun
def test_converted_driver_prints_and_saves_once_under_torchrun(tmp_path: Path) -> None:
    run = run_script(_converted(tmp_path), cwd=tmp_path, timeout=150).assert_ok()
    assert run.stdout.count("EPOCH-END") == 2, "each callback print once, by rank 0"
    assert run.stdout.count("DONE") == 1
    run.assert_only_rank0_saves(min_saves=2)
    assert set(torch.load(tmp_path / "model.pt")) == {"weight", "bias"}
