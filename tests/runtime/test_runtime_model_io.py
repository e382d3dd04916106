"""Model wrapping, state dicts, checkpoints and rank-0 helpers in a single process."""

from __future__ import annotations

import io
import os
from collections import OrderedDict

import pytest
import torch
from torch import nn

import ddpify.runtime as ddpify
from ddpify.runtime import NullObject


def small_model() -> nn.Module:
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))


# -------------------------------------------------------------------------------- model


def test_prepare_model_single_process_returns_same_object():
    model = small_model()
    assert ddpify.prepare_model(model) is model
    parallel = nn.DataParallel(model)
    assert ddpify.prepare_model(parallel) is parallel
    assert not any(isinstance(m, nn.SyncBatchNorm) for m in model.modules())


def test_prepare_model_single_process_keeps_the_data_parallel_the_script_made():
    """``data_parallel=True``: the converter removed the script's nn.DataParallel and code it
    cannot see reads ``model.module``; one process wraps it again, as the original did."""
    model = small_model()
    kept = ddpify.prepare_model(model, data_parallel=True)
    assert isinstance(kept, nn.DataParallel) and kept.module is model
    parallel = nn.DataParallel(model)
    assert ddpify.prepare_model(parallel, data_parallel=True) is parallel


def test_unwrap_strips_nested_wrappers_only():
    model = small_model()
    assert ddpify.unwrap(nn.DataParallel(nn.DataParallel(model))) is model
    assert ddpify.unwrap(model) is model
    assert ddpify.unwrap("not a model") == "not a model"


def test_load_state_dict_strips_module_prefix_without_mutating_input():
    source = small_model()
    prefixed = nn.DataParallel(source).state_dict()
    assert all(k.startswith("module.") for k in prefixed)
    keys_before = list(prefixed.keys())
    metadata_before = dict(prefixed._metadata)

    target = small_model()
    result = ddpify.load_state_dict(target, prefixed)
    assert result.missing_keys == [] and result.unexpected_keys == []
    for a, b in zip(source.state_dict().values(), target.state_dict().values()):
        assert torch.equal(a, b)
    assert list(prefixed.keys()) == keys_before
    assert dict(prefixed._metadata) == metadata_before


def test_load_state_dict_into_wrapped_model_and_strictness():
    source = small_model()
    target = nn.DataParallel(small_model())
    ddpify.load_state_dict(target, source.state_dict())  # plain keys into a wrapper
    assert torch.equal(target.module[0].weight, source[0].weight)

    partial = {"module.0.weight": torch.zeros(4, 3)}
    with pytest.raises(RuntimeError, match="Missing key"):
        ddpify.load_state_dict(small_model(), partial)
    result = ddpify.load_state_dict(small_model(), partial, strict=False)
    assert "0.bias" in result.missing_keys
    assert list(partial) == ["module.0.weight"]


def test_mixed_prefixes_are_not_stripped():
    state = OrderedDict([("module.0.weight", torch.zeros(4, 3)), ("0.bias", torch.zeros(4))])
    result = ddpify.load_state_dict(small_model(), state, strict=False)
    assert "module.0.weight" in result.unexpected_keys


# -------------------------------------------------------------------------- checkpoints


def test_save_creates_file_atomically_and_loads_back(tmp_path):
    target = tmp_path / "ckpt.pt"
    ddpify.save({"w": torch.arange(3)}, target)
    ddpify.save({"w": torch.arange(4)}, str(target))  # overwrite via str path
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"], "no temporary file may be left"
    loaded = ddpify.load(target)
    assert torch.equal(loaded["w"], torch.arange(4))
    assert loaded["w"].device == torch.device("cpu")


def test_failed_save_keeps_old_file_and_leaves_no_temp(tmp_path):
    target = tmp_path / "ckpt.pt"
    ddpify.save({"ok": 1}, target)
    with pytest.raises(Exception):
        ddpify.save({"bad": lambda: None}, target)  # lambdas cannot be pickled
    assert sorted(os.listdir(tmp_path)) == ["ckpt.pt"]
    assert ddpify.load(target) == {"ok": 1}


def test_save_to_file_object_and_unwraps_models():
    model = small_model()
    buffer = io.BytesIO()
    ddpify.save(nn.DataParallel(model), buffer)
    buffer.seek(0)
    restored = ddpify.load(buffer, weights_only=False)
    assert type(restored) is nn.Sequential
    assert torch.equal(restored[0].weight, model[0].weight)


def test_load_respects_explicit_map_location(tmp_path):
    target = tmp_path / "t.pt"
    ddpify.save(torch.ones(2), target)
    assert ddpify.load(target, map_location="cpu").device.type == "cpu"
    assert ddpify.load(target, "cpu").device.type == "cpu"  # positional map_location


def test_save_only_on_main_process(tmp_path, as_rank, monkeypatch):
    as_rank(1, 2)  # no group: barrier is a no-op, but rank 1 must not write
    monkeypatch.setattr(torch, "save", lambda *a, **k: pytest.fail("rank 1 called torch.save"))
    ddpify.save({"x": 1}, tmp_path / "c.pt")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("rank, writes", [(0, True), (1, False)])
def test_save_without_waiting_skips_the_barrier(tmp_path, as_rank, monkeypatch, rank, writes):
    """``wait=False``: a save under a condition the ranks may decide differently never waits
    for the others (they may never come); rank 0 still writes, no other rank does."""
    import ddpify.runtime._io as io_module

    as_rank(rank, 2)
    monkeypatch.setattr(io_module, "barrier_at", lambda *_: pytest.fail("save(wait=False) waited at a barrier"))
    ddpify.save({"x": 1}, tmp_path / "c.pt", wait=False)
    assert os.listdir(tmp_path) == (["c.pt"] if writes else [])
    waited = []
    monkeypatch.setattr(io_module, "barrier_at", lambda *_: waited.append(True))
    ddpify.save({"x": 1}, tmp_path / "d.pt")
    assert waited == [True]  # the default still waits


# ------------------------------------------------------------------------ rank-0 helpers


def test_print_only_on_main_process(capsys, as_rank):
    ddpify.print("hello", 1, sep="-")
    assert capsys.readouterr().out == "hello-1\n"
    as_rank(1, 2)
    ddpify.print("hidden")
    assert capsys.readouterr().out == ""


def test_rank_zero_returns_factory_on_main_and_null_elsewhere(as_rank):
    created = []

    def factory(*args, **kwargs):
        created.append((args, kwargs))
        return "real"

    assert ddpify.rank_zero(factory) is factory
    as_rank(1, 2)
    made = ddpify.rank_zero(factory)("logs", flush=True)
    assert isinstance(made, NullObject)
    assert created == []


@pytest.mark.parametrize("spelling", ["kwarg", "old_kwarg", "positional"])
def test_rank_zero_writer_still_makes_its_folder_on_every_rank(as_rank, tmp_path, spelling):
    """pt.darts (unseen20t): the writer's ``log_dir`` made the run folder that the next line's
    log file, opened on every rank, needs."""

    class SummaryWriter:
        def __init__(self, log_dir=None, logdir=None):
            raise AssertionError("built on rank 1")

    folder = tmp_path / "searchs" / "run" / "tb"
    as_rank(1, 2)
    made = ddpify.rank_zero(SummaryWriter)
    if spelling == "kwarg":
        writer = made(log_dir=str(folder))
    elif spelling == "old_kwarg":
        writer = made(logdir=folder)
    else:
        writer = made(str(folder))
    assert isinstance(writer, NullObject) and folder.is_dir()
    (tmp_path / "searchs" / "run" / "search.log").write_text("")


@pytest.mark.parametrize("log_dir", ["", None, "s3://bucket/run"])
def test_rank_zero_writer_default_or_remote_folder_is_not_made(as_rank, tmp_path, monkeypatch, log_dir):
    """An empty or absent log_dir is the writer's own default (rank 0's ``runs/...``); a remote
    one is no local folder."""

    class SummaryWriter:
        pass

    monkeypatch.chdir(tmp_path)
    as_rank(1, 2)
    assert isinstance(ddpify.rank_zero(SummaryWriter)(log_dir), NullObject)
    assert list(tmp_path.iterdir()) == []


def test_null_object_absorbs_everything():
    null = NullObject()
    assert null.add_scalar("loss", 1.0, global_step=3) is null
    assert null.summary.update({"a": 1}).anything.else_() is null
    assert null() is null and null["key"] is null
    null.attribute = 5
    null["key"] = 5
    del null.attribute
    del null["key"]
    assert null.attribute is null
    assert not null and bool(null) is False
    assert list(null) == [] and len(null) == 0
    with null as inner:
        assert inner is null
    with pytest.raises(KeyError):
        with null:
            raise KeyError("must not be swallowed")
    assert repr(null) == "NullObject()"


def test_prepare_trained_wraps_what_an_optimizer_steps_in_place(monkeypatch):
    """``ddpify.prepare_trained(self.nets, self.optims)``: the nets an optimizer of the dict
    steps are wrapped in place (the dict's kind kept); EMA copies and frozen nets stay plain;
    the optimizers may come as a dict, a list or one optimizer."""
    from ddpify.runtime import _model

    class Wrapped(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

    monkeypatch.setattr(_model, "prepare_model", lambda module, **options: Wrapped(module))

    class AttrDict(dict):
        pass

    generator, discriminator, ema, frozen = small_model(), small_model(), small_model(), small_model()
    nets = AttrDict(generator=generator, discriminator=discriminator, ema=ema, frozen=frozen, steps=3)
    optims = {"generator": torch.optim.SGD(generator.parameters(), lr=0.1), "discriminator": torch.optim.Adam(discriminator.parameters())}
    assert ddpify.prepare_trained(nets, optims) is nets and type(nets) is AttrDict
    assert nets["generator"].module is generator and nets["discriminator"].module is discriminator
    assert nets["ema"] is ema and nets["frozen"] is frozen and nets["steps"] == 3
    listed = [small_model(), small_model()]
    only = torch.optim.SGD(listed[1].parameters(), lr=0.1)
    ddpify.prepare_trained(listed, only)
    assert not isinstance(listed[0], Wrapped) and isinstance(listed[1], Wrapped)
