"""Issue 20, class 1: a trainer class handed its model and its optimizer, both built by code of
another file (glow-pytorch's ``Trainer(**built, dataset=..., hparams=...)`` with ``built``
from a builder module). The optimizer's parameters are out of sight, but the model the training
method runs is kept from a constructor parameter: it is wrapped where it is kept, with
``find_unused_parameters=True`` (its class is out of sight too), its loader is sharded, and a
slice of the batch by the configured size (``x[:self.batch_size // n]``) keeps the per-process
batch, and the device handed in for the data becomes each rank's own (``ddpify.device_from``). A class handed an optimizer whose model it does not run, or two candidate models, is
reported as before."""

from __future__ import annotations

import pytest

from ddpify.api import convert_source

_TRAINER = """\
import torch
from torch.utils.data import DataLoader


class Trainer(object):
    def __init__(self, {model}, {optim}, devices, data_device, dataset, hparams):
        self.{model} = {model}
        self.{optim} = {optim}
        self.devices = devices
        self.data_device = data_device
        self.batch_size = hparams.batch_size
        self.data_loader = DataLoader(dataset, batch_size=self.batch_size, shuffle=True, drop_last=True)

    def train(self):
        self.{model}.train()
        for epoch in range(3):
            for i, batch in enumerate(self.data_loader):
                batch = batch.to(self.data_device)
                if i == 0 and epoch == 0:
                    self.{model}(batch[: self.batch_size // len(self.devices)])  # data-dependent init
                if len(self.devices) > 1 and not hasattr(self.{model}, "module"):
                    self.{model} = torch.nn.parallel.DataParallel(self.{model}, self.devices)
                loss = self.{model}(batch).mean()
                self.{optim}.zero_grad()
                loss.backward()
                self.{optim}.step()
"""


@pytest.mark.parametrize(("model", "optim"), [("graph", "optim"), ("model", "optimizer"), ("net", "opt")])
def test_the_model_the_training_method_runs_is_wrapped_where_it_is_kept(model: str, optim: str) -> None:
    result = convert_source(_TRAINER.format(model=model, optim=optim), filename="trainer.py")
    assert f"self.{model} = ddpify.prepare_model(self.{model}, find_unused_parameters=True)" in result.output
    assert "ddpify.distributed_loader(" in result.output and "per_process_batch=True" in result.output
    assert "DataParallel" not in result.output.replace("nn.DataParallel removed", "")
    assert not [m for m in result.manual if "no model of this file is wrapped" in m.why or "is stepped" in m.why]
    assert any("handed in, built by code this file does not show" in c.what for c in result.changes)
    # the device the caller picked ("cuda:0" from a configuration file) becomes each rank's own
    assert "self.data_device = ddpify.device_from(data_device)" in result.output


def test_an_optimizer_whose_model_the_class_does_not_run_is_reported() -> None:
    text = _TRAINER.format(model="graph", optim="optim").replace("loss = self.graph(batch).mean()", "loss = compute(batch).mean()")
    text = text.replace("self.graph(batch[: self.batch_size // len(self.devices)])", "pass")
    result = convert_source(text, filename="trainer.py")
    assert "prepare_model" not in result.output
    assert any("is stepped" in m.why for m in result.manual)
