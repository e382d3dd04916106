"""The converter reads the project's own modules beside the script (``convert_source(...,
filename=path)``): a class there that writes files (a CSV logger) is built on rank 0 only, and
what it does not do (train, run a collective, be a model) keeps it on every rank."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ddpify.api import convert_source

_LOGGERS = """\
import csv
import json
import logging
import logging.handlers

import torch
import torch.distributed as dist
import torch.nn as nn


class CSVLogger:
    def __init__(self, fieldnames, filename="log.csv"):
        self.filename = filename
        self.csv_file = open(filename, "w")
        self.writer = csv.DictWriter(self.csv_file, fieldnames=fieldnames)
        self.writer.writeheader()

    def writerow(self, row):
        self.writer.writerow(row)


class TextLog:
    def write(self, line):
        with open("log.txt", mode="a") as f:
            f.write(line)


class Logger(object):
    def __init__(self, log_file_name, logger_name):
        self.__logger = logging.getLogger(logger_name)
        self.__logger.addHandler(logging.FileHandler(log_file_name))
        self.__logger.addHandler(logging.StreamHandler())

    def get_log(self):
        return self.__logger


class RotatingLog:
    def __init__(self, path):
        self.handler = logging.handlers.RotatingFileHandler(path, maxBytes=1000)


class Reader:
    def __init__(self, filename):
        self.lines = open(filename).read().splitlines()


class Syncing:
    def __init__(self, filename):
        self.file = open(filename, "w")

    def log(self, value):
        dist.all_reduce(value)
        self.file.write(str(value))


class Cached(torch.utils.data.Dataset):
    def __init__(self, filename):
        with open(filename, "w") as f:
            f.write("vocabulary")
        self.vocab_size = 10


class Config:
    def __init__(self, settings):
        self.settings = settings

    def load_config(self, path):
        with open(path) as f:
            self.settings.update(json.load(f))

    def save_config(self, path):
        with open(path, "w") as f:
            json.dump(self.settings, f)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)
        self.trace = open("trace.txt", "w")

    def forward(self, x):
        return self.fc(x)
"""
_SCRIPT = """\
import torch
from torch.utils.data import DataLoader, TensorDataset

from loggers import {name}

loader = DataLoader(TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8, shuffle=True)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
log = {name}({arguments})
for epoch in range(2):
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
{after}
"""


@pytest.mark.parametrize(
    ("name", "arguments", "built_on_rank_zero"),
    [
        ("CSVLogger", 'fieldnames=["epoch"], filename="run.csv"', True),
        ("TextLog", "", True),
        ("Logger", '"log.txt", "run"', True),  # a logging file handler (CIFAR-ZOO)
        ("RotatingLog", '"log.txt"', True),
        ("Reader", '"data.txt"', False),  # reads only
        ("Syncing", '"run.txt"', False),  # a collective: every rank must call it
        ("Net", "", False),  # a module
        ("Cached", '"vocab.json"', False),  # a dataset that caches its files: its data is every rank's
    ],
)
def test_a_project_class_that_writes_files_is_built_on_rank_zero(
    tmp_path: Path, name: str, arguments: str, built_on_rank_zero: bool
) -> None:
    (tmp_path / "loggers.py").write_text(_LOGGERS, encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT.format(name=name, arguments=arguments, after=""), encoding="utf-8")
    result = convert_source(script.read_text(encoding="utf-8"), filename=str(script))
    assert (f"log = ddpify.rank_zero({name})(" in result.output) is built_on_rank_zero
    if built_on_rank_zero:
        assert any(c.what.startswith(f"{name} (project code that writes files or logs on every rank) is built on rank 0 only") for c in result.changes)


def test_a_logger_handed_out_by_a_method_of_the_rank_zero_object(tmp_path: Path) -> None:
    """CIFAR-ZOO's ``logger = Logger(log_file_name=..., ...).get_log()``: built on rank 0 only; the
    other ranks' no-op object hands out a no-op logger, so log.txt gets each line once."""
    (tmp_path / "loggers.py").write_text(_LOGGERS, encoding="utf-8")
    script = tmp_path / "train.py"
    text = _SCRIPT.format(name="Logger", arguments='"log.txt", "run"', after="log.info(f'loss {loss.item()}')")
    script.write_text(text.replace('log = Logger("log.txt", "run")', 'log = Logger("log.txt", "run").get_log()'), encoding="utf-8")
    result = convert_source(script.read_text(encoding="utf-8"), filename=str(script))
    assert 'log = ddpify.rank_zero(Logger)("log.txt", "run").get_log()' in result.output
    assert not result.manual, result.manual


def test_a_configuration_read_on_every_rank_is_kept_there_without_an_item(tmp_path: Path) -> None:
    """Deep-SVDD's ``cfg = Config(...)``: its values are read on every rank, and its only write
    (``cfg.save_config(...)``) the conversion guards for rank 0, so keeping it everywhere
    writes nothing per rank: no needs-a-human item (unlike CSVLogger, which writes when built)."""
    (tmp_path / "loggers.py").write_text(_LOGGERS, encoding="utf-8")
    script = tmp_path / "train.py"
    after = "lr = cfg.settings['lr']\nprint(lr * 2)\ncfg.save_config('config.json')"
    script.write_text(_SCRIPT.format(name="Config", arguments="{'lr': 0.1}", after=after).replace("log = Config", "cfg = Config"), encoding="utf-8")
    result = convert_source(script.read_text(encoding="utf-8"), filename=str(script))
    assert "ddpify.rank_zero(Config)" not in result.output
    assert "if ddpify.is_main_process():\n    cfg.save_config('config.json')" in result.output
    assert not any("cfg" in m.why for m in result.manual), result.manual


def test_a_value_read_off_the_rank_zero_object_keeps_it_on_every_rank(tmp_path: Path) -> None:
    (tmp_path / "loggers.py").write_text(_LOGGERS, encoding="utf-8")
    script = tmp_path / "train.py"
    after = "backup = log.filename + '.bak'\nprint(len(backup))"
    script.write_text(_SCRIPT.format(name="CSVLogger", arguments='fieldnames=["epoch"], filename="run.csv"', after=after), encoding="utf-8")
    result = convert_source(script.read_text(encoding="utf-8"), filename=str(script))
    assert "ddpify.rank_zero(CSVLogger)" not in result.output
    assert any("log.filename" in m.why for m in result.manual), result.manual


@pytest.mark.parametrize(
    ("after", "kept"),
    [
        ('saved = log.filename\nprint("%s, %d" % (saved, 1))', True),  # formatted on every rank: no string there
        ('saved = log.filename\nline = "{} {}".format(*[saved, 1])', True),
        ('saved = log.filename\nmeta = {"file": saved}', False),  # stored as it is: the no-op object pickles
        ('saved = log.filename\nmeta = [saved, 1]', False),
    ],
)
def test_a_value_formatted_on_every_rank_keeps_the_object_there(tmp_path: Path, after: str, kept: bool) -> None:
    """GAN_stability's ``'%.4f' % (logger.get_last(...), ...)``: an element of a tuple that is
    formatted is computed with, not stored."""
    (tmp_path / "loggers.py").write_text(_LOGGERS, encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT.format(name="CSVLogger", arguments='fieldnames=["epoch"], filename="run.csv"', after=after), encoding="utf-8")
    result = convert_source(script.read_text(encoding="utf-8"), filename=str(script))
    assert ("ddpify.rank_zero(CSVLogger)" not in result.output) is kept


def test_without_a_path_the_project_is_not_read() -> None:
    result = convert_source(textwrap.dedent(_SCRIPT.format(name="CSVLogger", arguments='fieldnames=["epoch"]', after="")))
    assert "ddpify.rank_zero(CSVLogger)" not in result.output


def test_a_file_writer_kept_in_a_container_stays_on_every_rank(tmp_path: Path) -> None:
    """``loggers["train"] = CSVLogger(...)``: no name to follow value reads through."""
    (tmp_path / "loggers.py").write_text(_LOGGERS, encoding="utf-8")
    script = tmp_path / "train.py"
    text = _SCRIPT.format(name="CSVLogger", arguments='fieldnames=["epoch"]', after="")
    script.write_text(text.replace("log = CSVLogger(", "logs = {}\nlogs['train'] = CSVLogger("), encoding="utf-8")
    result = convert_source(script.read_text(encoding="utf-8"), filename=str(script))
    assert "ddpify.rank_zero(CSVLogger)" not in result.output


_DIRS = """\
import os

import torch.distributed as dist


def prepare_dirs(config):
    for path in [config["data_dir"], config["ckpt_dir"]]:
        if not os.path.exists(path):
            os.makedirs(path)


def prepare_and_sync(config):
    os.makedirs(config["ckpt_dir"], exist_ok=True)
    dist.barrier()


def describe(config):
    return str(config)
"""


@pytest.mark.parametrize(
    ("call", "ordered", "spelling"),
    [
        ("prepare_dirs(config)", True, "from dirs import describe, prepare_and_sync, prepare_dirs"),  # rank 0 first
        ("prepare_and_sync(config)", False, "from dirs import describe, prepare_and_sync, prepare_dirs"),  # would hang
        ("print(describe(config))", False, "from dirs import describe, prepare_and_sync, prepare_dirs"),
        ("prepare_dirs(config)", True, "from dirs import *"),  # a star import of the project module (LDAM's utils)
        ("prepare_and_sync(config)", False, "from dirs import *"),
    ],
)
def test_a_project_helper_that_creates_directories_runs_on_rank_zero_first(tmp_path: Path, call: str, ordered: bool, spelling: str) -> None:
    (tmp_path / "dirs.py").write_text(_DIRS, encoding="utf-8")
    script = tmp_path / "train.py"
    text = _SCRIPT.format(name="CSVLogger", arguments="", after="").replace("from loggers import CSVLogger\n", spelling + "\n")
    text = text.replace("log = CSVLogger()\n", f'config = {{"data_dir": "d", "ckpt_dir": "c"}}\n{call}\n')
    script.write_text(text, encoding="utf-8")
    result = convert_source(text, filename=str(script))
    assert (f"with ddpify.main_process_first():\n    {call}" in result.output) is ordered


def test_a_directory_helper_run_first_on_rank_zero_is_not_also_reported(tmp_path: Path) -> None:
    """The conversion orders the calls itself: no item asks the user to guard them as well."""
    (tmp_path / "utils.py").write_text(_DIRS.replace("def prepare_dirs(config)", "def make_folder(path, version)"), encoding="utf-8")
    script = tmp_path / "train.py"
    text = _SCRIPT.format(name="CSVLogger", arguments="", after="").replace(
        "from loggers import CSVLogger\n", "from utils import make_folder\n"
    )
    text = text.replace("log = CSVLogger()\n", 'make_folder("models", "v1")\nmake_folder("samples", "v1")\n')
    script.write_text(text, encoding="utf-8")
    result = convert_source(text, filename=str(script))
    assert result.output.count("with ddpify.main_process_first():\n    make_folder(") == 2
    assert not [item for item in result.manual if "make_folder" in item.why], result.manual


_DIFFUSION = """\
from copy import deepcopy

import torch
from torch import nn


class GaussianDiffusion(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.ema_model = {copy}

    def forward(self, x):
        return ((self.model(x) - x) ** 2).mean()


def get_diffusion_from_args(args):
    net = nn.Linear(4, 4)
    diffusion = GaussianDiffusion(net)
    return diffusion
"""


@pytest.mark.parametrize(
    ("copy", "build", "option"),
    [
        ("deepcopy(model)", "diffusion = GaussianDiffusion(torch.nn.Linear(4, 4))", True),
        ("deepcopy(model)", "diffusion = get_diffusion_from_args(None)", True),
        ("deepcopy(self.model)", "diffusion = get_diffusion_from_args(None).to('cpu')", True),
        ("model", "diffusion = GaussianDiffusion(torch.nn.Linear(4, 4))", False),  # the same module: every parameter trains
    ],
)
def test_a_project_model_with_an_unused_copy_is_wrapped_to_find_unused_parameters(
    tmp_path: Path, copy: str, build: str, option: bool
) -> None:
    """An EMA copy inside a model class of the project gets no gradient: DDP must look for
    unused parameters (it stopped at the first backward before, with no report line)."""
    (tmp_path / "diffusion.py").write_text(_DIFFUSION.format(copy=copy), encoding="utf-8")
    script = tmp_path / "train.py"
    text = _SCRIPT.format(name="CSVLogger", arguments="", after="")
    text = text.replace("from loggers import CSVLogger\n", "from diffusion import GaussianDiffusion, get_diffusion_from_args\n")
    text = text.replace("model = torch.nn.Linear(4, 1)\n", f"{build}\n").replace("log = CSVLogger()\n", "")
    text = text.replace("model.parameters()", "diffusion.parameters()").replace(
        "loss = torch.nn.functional.mse_loss(model(x), y)", "loss = diffusion(x)"
    )
    script.write_text(text, encoding="utf-8")
    result = convert_source(text, filename=str(script))
    assert ("ddpify.prepare_model(diffusion, find_unused_parameters=True)" in result.output) is option, result.output
    assert "ddpify.prepare_model(diffusion" in result.output


_CACHE = """\
import os
import pickle


def build_dataset(config):
    if os.path.exists(config.vocab_path):
        vocab = pickle.load(open(config.vocab_path, "rb"))
    else:
        vocab = {"<pad>": 0}
        pickle.dump(vocab, open(config.vocab_path, "wb"))
    return vocab, [1, 2], [3]


def read_dataset(config):
    with open(config.train_path) as f:
        return f.read().split(), [1], [2]
"""


@pytest.mark.parametrize(
    ("call", "first"),
    [
        ("vocab, train, dev = build_dataset(config)", True),  # builds and pickles its cache when missing
        ("build_dataset(config)", True),
        ("vocab, train, dev = read_dataset(config)", False),  # reads only
    ],
)
def test_a_project_helper_that_writes_its_cache_runs_on_rank_zero_first(tmp_path: Path, call: str, first: bool) -> None:
    """textcls's ``build_dataset``: every rank testing for the vocabulary file and pickling it
    at once reads half-written files; rank 0 builds it first, the others then load it."""
    (tmp_path / "data_utils.py").write_text(_CACHE, encoding="utf-8")
    script = tmp_path / "train.py"
    script.write_text(
        _SCRIPT.format(name="CSVLogger", arguments='fieldnames=["epoch"]', after="")
        .replace("from loggers import CSVLogger", f"from data_utils import build_dataset, read_dataset\n\nconfig = None\n{call}"),
        encoding="utf-8",
    )
    (tmp_path / "loggers.py").write_text(_LOGGERS, encoding="utf-8")
    result = convert_source(script.read_text(encoding="utf-8"), filename=str(script))
    assert (f"with ddpify.main_process_first():\n    {call}" in result.output) is first, result.output
