"""Issue 20, class 1 (unseen20l's advtrain_mnist): the model built in ``main()`` and handed to a
trainer's ``train(model, ...)``, which builds the optimizer itself. The trainer also has
methods that only forward their own ``model`` parameter to ``train`` and that nothing calls
(``standard_train(self, model, ...)``): a parameter of code that never runs brings in no model,
so the one model ``main()`` builds is wrapped there. Before, that parameter made the model's
origin unknown, and the run trained one model per rank on the full data.

Code that may run keeps the origin unknown (the model is reported, not wrapped): a method called
through ``getattr`` with a computed name, a method of a class with a base (the base may call
it), a decorated function (a framework calls it), and one a project file importing the script
calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.api import convert_source

_SCRIPT = """\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class Trainer({base}):
    def __init__(self, lr):
        self.lr = lr

{extra}
    def train(self, model, loader):
        opt = torch.optim.Adam(model.parameters(), self.lr)
        for epoch in range(2):
            for x, y in loader:
                loss = nn.functional.mse_loss(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()


def main():
    model = nn.Linear(4, 1)
    if torch.cuda.is_available():
        model.cuda()
    trainer = Trainer(1e-3)
    loader = DataLoader(TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8, shuffle=True)
    trainer.train(model, loader){call}


if __name__ == "__main__":
    main()
"""

_FORWARDING = """\
    def standard_train(self, model, loader):
        self.train(model, loader)

    def finetune(self, model, loader):
        self.lr = self.lr / 10
        return self.train(model, loader)
"""

_DEAD = {
    "forwarding methods nothing calls": {"base": "", "extra": _FORWARDING, "call": ""},
    "a base of object": {"base": "object", "extra": _FORWARDING, "call": ""},
    "a getattr with a literal name": {"base": "", "extra": _FORWARDING, "call": '\n    getattr(trainer, "train")(model, loader)'},
}
_LIVE = {
    "a getattr with a computed name": {"base": "", "extra": _FORWARDING, "call": '\n    getattr(trainer, mode + "_train")(model, loader)'},
    "a class with a base": {"base": "Base", "extra": _FORWARDING, "call": ""},
    "a decorated method": {"base": "", "extra": "    @hook\n" + _FORWARDING, "call": ""},
}


def _wrapped(result) -> bool:
    return "    model = ddpify.prepare_model(model)\n" in result.output


@pytest.mark.parametrize("parts", _DEAD.values(), ids=_DEAD.keys())
def test_a_model_parameter_of_code_that_never_runs_does_not_stop_the_wrap(parts: dict[str, str]) -> None:
    result = convert_source(_SCRIPT.format(**parts))
    assert _wrapped(result)
    assert "ddpify.distributed_loader(" in result.output
    assert not result.manual
    main = result.output.index("def main():")
    assert result.output.index("model = ddpify.prepare_model(model)") > main


@pytest.mark.parametrize("parts", _LIVE.values(), ids=_LIVE.keys())
def test_code_that_may_run_keeps_the_model_unknown(parts: dict[str, str]) -> None:
    result = convert_source(_SCRIPT.format(**parts))
    assert not _wrapped(result)
    assert any("standard_train" in m.why or "finetune" in m.why for m in result.manual)


def test_a_method_a_project_file_calls_may_run(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(_SCRIPT.format(base="", extra=_FORWARDING, call=""), encoding="utf-8")
    (tmp_path / "sweep.py").write_text("import torch.nn as nn\nfrom train import Trainer\n\nTrainer(1e-3).finetune(nn.Linear(4, 1), [])\n")
    result = convert_source(script.read_text(encoding="utf-8"), filename=str(script))
    assert not _wrapped(result)
    (tmp_path / "sweep.py").write_text("from train import main\n\nmain()\n")
    assert _wrapped(convert_source(script.read_text(encoding="utf-8"), filename=str(script)))
