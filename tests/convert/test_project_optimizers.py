"""Issue 20 (unseen20g's SAM script): an optimizer of a class of the project's own modules
that derives from ``torch.optim.Optimizer`` (SAM, LARS) says which model trains, as
``torch.optim.SGD`` does: the model is wrapped, the loader sharded, and no "training without an
optimizer" item. Spellings: ``from sam import SAM``, ``import sam; sam.SAM(...)``; a project
class that is no optimizer decides nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.api import convert_source

_SAM = """\
import torch


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    e_w = p.grad * group["rho"]
                    p.add_(e_w)
                    self.state[p]["e_w"] = e_w
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if "e_w" in self.state[p]:
                    p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()
"""

_TRAIN = """\
import torch
from torch.utils.data import DataLoader, TensorDataset

from sam import SAM

loader = DataLoader(TensorDataset(torch.randn(64, 4), torch.randn(64, 1)), batch_size=8, shuffle=True)
model = torch.nn.Linear(4, 1)
optimizer = SAM(model.parameters(), torch.optim.SGD, rho=0.05, lr=0.1)
for epoch in range(2):
    for x, y in loader:
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.first_step(zero_grad=True)
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.second_step(zero_grad=True)
torch.save(model.state_dict(), "model.pt")
"""


@pytest.mark.parametrize(
    ("imports", "built"),
    [("from sam import SAM", "SAM("), ("import sam", "sam.SAM("), ("from sam import SAM as Sharpness", "Sharpness(")],
)
def test_an_optimizer_class_of_the_project_trains_the_model(tmp_path: Path, imports: str, built: str) -> None:
    (tmp_path / "sam.py").write_text(_SAM)
    script = tmp_path / "train.py"
    text = _TRAIN.replace("from sam import SAM", imports).replace("SAM(", built)
    script.write_text(text)
    result = convert_source(text, filename=str(script))
    assert "model = ddpify.prepare_model(model)" in result.output, result.output
    assert "ddpify.distributed_loader(" in result.output
    assert not [m for m in result.manual if "optimizer" in m.why], result.manual


def test_a_project_class_that_is_no_optimizer_trains_nothing(tmp_path: Path) -> None:
    (tmp_path / "sam.py").write_text(_SAM.replace("(torch.optim.Optimizer)", "(object)"))
    script = tmp_path / "train.py"
    script.write_text(_TRAIN)
    result = convert_source(_TRAIN, filename=str(script))
    assert "prepare_model" not in result.output, result.output


@pytest.mark.parametrize(
    "added",
    ['sys.path.append("..")', 'sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))', 'sys.path.append("../")'],
)
def test_a_module_the_script_puts_on_sys_path(tmp_path: Path, added: str) -> None:
    """unseen20g's SAM example: ``example/train.py`` appends ``..`` to ``sys.path`` and imports
    ``sam.py`` from the folder above: that module is the project's, so its optimizer class is
    known."""
    (tmp_path / "sam.py").write_text(_SAM)
    (tmp_path / "example").mkdir()
    script = tmp_path / "example" / "train.py"
    text = _TRAIN.replace("from sam import SAM", f"import os\nimport sys\n\n{added}\nfrom sam import SAM")
    script.write_text(text)
    result = convert_source(text, filename=str(script))
    assert "model = ddpify.prepare_model(model)" in result.output, result.output


def test_a_package_named_like_the_model_is_no_member_of_it(tmp_path: Path) -> None:
    """unseen20g's SAM example imports ``from model.smooth import smooth_loss`` and names its
    network ``model``: the import path is no member the DDP wrapper lacks (a false line)."""
    (tmp_path / "sam.py").write_text(_SAM)
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "smooth.py").write_text("def smooth_loss(model, x):\n    return model(x).sum()\n")
    script = tmp_path / "train.py"
    text = _TRAIN.replace("from sam import SAM", "from model.smooth import smooth_loss\nfrom sam import SAM")
    text = text.replace("torch.save(", "print(smooth_loss(model, x))\ntorch.save(")
    script.write_text(text)
    result = convert_source(text, filename=str(script))
    assert not [m for m in result.manual if "model.smooth" in m.why], result.manual
