"""Runtime helpers for values each process would make for itself (``device_from``, the shared
temporary folders) and for logging on rank 0 (``rank_zero_logging``), with one process and as a
simulated rank (launcher variables, no process group). Their multi-process behaviour runs for
real in tests/e2e/test_per_process_values.py."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
import torch

import ddpify.runtime as ddpify


@pytest.fixture
def cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend CUDA is there: ddpify.device() then names cuda:LOCAL_RANK (no GPU is touched)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)


@pytest.mark.parametrize("value", ["cuda:1", "cuda", 1, "cpu", torch.device("cuda", 0), None, -1])
def test_device_from_keeps_every_value_with_one_process(value: object) -> None:
    assert ddpify.device_from(value) == value


@pytest.mark.parametrize("value", [0, 3, torch.device("cuda", 0)])
def test_device_from_gives_each_rank_its_own_gpu(value: object, as_rank, cuda) -> None:
    as_rank(1, 2)
    assert ddpify.device_from(value) == torch.device("cuda", 1)


@pytest.mark.parametrize("value", ["cuda:0", "cuda"])
def test_device_from_keeps_a_string_a_string(value: str, as_rank, cuda) -> None:
    """``--device cuda``: the rank's own GPU, still text the script's string tests read."""
    as_rank(1, 2)
    given = ddpify.device_from(value)
    assert isinstance(given, str) and str(given) == "cuda:1"
    assert torch.device(given) == torch.device("cuda", 1)
    assert "cuda" in given and given == "cuda" and given.startswith("cuda")


def test_device_name_is_the_device_as_text(as_rank, cuda) -> None:
    as_rank(1, 2)
    name = ddpify.device_name()
    assert str(name) == "cuda:1" and torch.device(name) == torch.device("cuda", 1)
    assert name == "cuda" and not name != "cuda" and "cuda" in name
    assert name == "cuda:1" and name != "cuda:0" and name != "cpu" and not name == "cpu"


def test_device_name_pickles_as_a_plain_string(as_rank, cuda) -> None:
    """A checkpoint saving the script's options loads where ddpify is not installed."""
    import pickle

    as_rank(1, 2)
    loaded = pickle.loads(pickle.dumps({"device": ddpify.device_name()}))
    assert type(loaded["device"]) is str and loaded["device"] == "cuda:1"


def test_device_name_without_cuda_is_the_cpu(as_rank) -> None:
    as_rank(1, 2)
    name = ddpify.device_name()
    assert name == "cpu" and name != "cuda" and "cuda" not in name
    assert torch.zeros(1).to(name).device == torch.device("cpu")


@pytest.mark.parametrize("value", ["cpu", "mps", -1, "not a device", True])
def test_device_from_keeps_what_is_not_a_cuda_device(value: object, as_rank, cuda) -> None:
    as_rank(1, 2)
    assert ddpify.device_from(value) == value


def test_device_from_without_cuda_is_the_cpu(as_rank) -> None:
    as_rank(1, 2)
    assert ddpify.device_from("cuda:0") == "cpu"
    assert ddpify.device_from(0) == torch.device("cpu")


@pytest.fixture
def root_handlers(monkeypatch: pytest.MonkeyPatch) -> list[logging.Handler]:
    """The root logger's handlers, restored after the test."""
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])
    return root.handlers


def test_rank_zero_logging_is_the_callable_itself_with_one_process(root_handlers) -> None:
    assert ddpify.rank_zero_logging(logging.FileHandler) is logging.FileHandler
    assert ddpify.rank_zero_logging(logging.basicConfig) is logging.basicConfig


def test_rank_zero_logging_on_other_ranks(tmp_path: Path, as_rank, root_handlers, capsys: pytest.CaptureFixture[str]) -> None:
    """No log file, a real handler to configure, warnings (not INFO) on stderr with the rank."""
    as_rank(1, 2)
    handler = ddpify.rank_zero_logging(logging.FileHandler)(tmp_path / "train.log", mode="w")
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(logging.Formatter("%(message)s"))
    ddpify.rank_zero_logging(logging.basicConfig)(level=logging.INFO, filename=str(tmp_path / "root.log"))
    logger = logging.getLogger("ddpify-test-replica")
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    logger.info("info line")
    logger.warning("warning line")
    assert isinstance(handler, logging.NullHandler)
    assert os.listdir(tmp_path) == []
    consoles = [h for h in root_handlers if isinstance(h, logging.StreamHandler) and h.level == logging.WARNING]
    assert len(consoles) == 1, "one replica console, however many configuring calls"
    err = capsys.readouterr().err
    assert "info line" not in err
    assert "[rank 1] WARNING:ddpify-test-replica:warning line" in err


def test_shared_temporary_folders_with_one_process() -> None:
    made = Path(ddpify.shared_mkdtemp(prefix="ddpify-test-"))
    assert made.is_dir() and made.name.startswith("ddpify-test-")
    made.rmdir()
    with ddpify.shared_temporary_directory(suffix="-x") as name:
        assert Path(name).is_dir() and name.endswith("-x")
    assert not Path(name).exists()
