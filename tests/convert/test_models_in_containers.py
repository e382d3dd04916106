"""Issue 20, class 2 (unseen20g's stargan-v2): models that live in a container a helper of the
project builds, each given its own optimizer in a loop. Which nets the container holds and which
an optimizer steps is what the run builds, so the run decides: ``ddpify.prepare_trained(nets,
optims)`` where they are on their final device (the end of the constructor, else right after
the optimizers). Where no statement is a safe place, the model is held and said, as before.
Also: a ``Solver(nn.Module)`` whose ``self.net`` trains is not wrapped whole on top, and a
checkpoint object of the project read out of a list (``for ckptio in self.ckptios:
ckptio.save(step)``) saves on rank 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from ddpify.api import convert_source

_NETS = """\
import torch.nn as nn


def build_nets(args):
    return {"generator": nn.Linear(4, 4), "discriminator": nn.Linear(4, 1), "frozen": nn.Linear(4, 4)}


def build_net(args):
    return nn.Linear(4, 1)
"""

_TRAIN = """
    def train(self, loader):
        for x in loader:
            loss = self.nets["discriminator"](self.nets["generator"](x)).mean()
            for o in self.optims.values():
                o.zero_grad()
            loss.backward()
            for o in self.optims.values():
                o.step()
"""


def _convert(tmp_path: Path, text: str):
    (tmp_path / "nets.py").write_text(_NETS)
    script = tmp_path / "solver.py"
    script.write_text(text)
    return convert_source(text, filename=str(script))


@pytest.mark.parametrize(
    ("init", "wrap"),
    [
        pytest.param(  # stargan-v2: a loop that skips a net, under the training mode, with an else
            """        if args.mode == "train":
            self.optims = {}
            for net in self.nets.keys():
                if net == "frozen":
                    continue
                self.optims[net] = torch.optim.Adam(self.nets[net].parameters(), lr=1e-3)
        else:
            self.optims = None
        self.to(self.device)
""",
            '        self.to(self.device)\n        if args.mode == "train":\n            ddpify.prepare_trained(self.nets, self.optims)\n',
            id="loop-under-mode",
        ),
        pytest.param(
            """        self.optims = {k: torch.optim.SGD(self.nets[k].parameters(), lr=0.1) for k in self.nets}
        self.to(self.device)
""",
            "        self.to(self.device)\n        ddpify.prepare_trained(self.nets, self.optims)\n",
            id="dict-comprehension",
        ),
    ],
)
def test_a_constructor_wraps_what_its_optimizers_step_at_its_end(tmp_path: Path, init: str, wrap: str) -> None:
    text = (
        "import torch\nimport torch.nn as nn\n\nfrom nets import build_nets\n\n\nclass Solver(nn.Module):\n"
        "    def __init__(self, args):\n        super().__init__()\n"
        '        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")\n'
        "        self.nets = build_nets(args)\n" + init + _TRAIN
    )
    result = _convert(tmp_path, text)
    assert wrap in result.output, result.output
    assert not [m for m in result.manual if "not wrapped" in m.why], result.manual
    assert any("ddpify.prepare_trained(self.nets, self.optims) (the run tells which they are)" in c.what for c in result.changes)
    again = _convert(tmp_path, result.output)
    assert again.output == result.output  # converting twice changes nothing


def test_a_function_wraps_right_after_its_optimizer_loop(tmp_path: Path) -> None:
    text = """\
import torch

from nets import build_nets


def main(args, loader):
    nets = build_nets(args)
    optims = {}
    for name in nets:
        optims[name] = torch.optim.Adam(nets[name].parameters())
    for x in loader:
        loss = nets["discriminator"](nets["generator"](x)).mean()
        loss.backward()
        for o in optims.values():
            o.step()
"""
    result = _convert(tmp_path, text)
    assert "        optims[name] = torch.optim.Adam(nets[name].parameters())\n    ddpify.prepare_trained(nets, optims)\n" in result.output


def test_moves_after_the_optimizers_come_before_the_wrap(tmp_path: Path) -> None:
    """``for net in nets.values(): net.to(device)`` after the optimizers: the wrap follows it
    (never ``net = ddpify.prepare_model(net)`` after the loop: that wraps the last net only)."""
    text = (
        "import torch\n\nfrom nets import build_nets\n\n\ndef build(args, loader):\n    nets = build_nets(args)\n    optims = {}\n"
        "    for name in nets:\n        optims[name] = torch.optim.Adam(nets[name].parameters())\n"
        "    for net in nets.values():\n        net.to(args.device)\n"
        "    for x in loader:\n        nets['generator'](x).mean().backward()\n        optims['generator'].step()\n"
    )
    result = _convert(tmp_path, text)
    assert "        net.to(ddpify.device_from(args.device))\n    ddpify.prepare_trained(nets, optims)\n" in result.output
    assert "prepare_model(net)" not in result.output


@pytest.mark.parametrize(
    "after",
    [
        "    nets['generator'] = nets['generator'].half()\n",  # rebinds an element after its optimizer
        "    return nets, optims\n",  # handed back: the caller may move it
    ],
)
def test_no_safe_place_keeps_the_nets_unwrapped_and_says_so(tmp_path: Path, after: str) -> None:
    text = (
        "import torch\n\nfrom nets import build_nets\n\n\ndef build(args, loader):\n    nets = build_nets(args)\n    optims = {}\n"
        "    for name in nets:\n        optims[name] = torch.optim.Adam(nets[name].parameters())\n" + after
    )
    if "return" not in after:
        text += "    for x in loader:\n        nets['generator'](x).mean().backward()\n        optims['generator'].step()\n"
    result = _convert(tmp_path, text)
    assert "prepare_trained" not in result.output
    assert any("not wrapped" in m.why for m in result.manual), result.manual


def test_a_test_changed_later_in_the_constructor_is_not_repeated(tmp_path: Path) -> None:
    text = (
        "import torch\nimport torch.nn as nn\n\nfrom nets import build_nets\n\n\nclass Solver(nn.Module):\n"
        "    def __init__(self, args):\n        super().__init__()\n        self.nets = build_nets(args)\n"
        "        if self.training_mode:\n            self.optims = {}\n            for k in self.nets:\n"
        "                self.optims[k] = torch.optim.Adam(self.nets[k].parameters())\n"
        "            self.training_mode = False\n" + _TRAIN
    )
    result = _convert(tmp_path, text)
    assert "prepare_trained" not in result.output


def test_a_module_whose_part_trains_is_not_wrapped_whole_on_top(tmp_path: Path) -> None:
    """``Adam(self.net.parameters())`` in a ``Solver(nn.Module)`` that has no forward: ``self.net``
    is what trains and is wrapped in the constructor; ``solver`` itself is not wrapped as well
    (a DDP around a module holding a DDP, placed after ``solver.train(loader)``)."""
    text = """\
import torch
import torch.nn as nn

from nets import build_net


class Solver(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.net = build_net(args)
        self.opt = torch.optim.Adam(self.net.parameters())
        self.to("cuda" if torch.cuda.is_available() else "cpu")

    def train(self, loader):
        for x in loader:
            loss = self.net(x).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()


def main(args, loader):
    solver = Solver(args)
    solver.train(loader)
"""
    result = _convert(tmp_path, text)
    assert "        self.net = ddpify.prepare_model(self.net)\n" in result.output
    assert "prepare_model(solver" not in result.output


def test_a_project_checkpoint_object_read_out_of_a_list_saves_on_rank_zero(tmp_path: Path) -> None:
    (tmp_path / "checkpoint.py").write_text(
        "import torch\n\n\nclass CheckpointIO:\n    def __init__(self, fname, **modules):\n        self.fname, self.modules = fname, modules\n\n"
        "    def save(self, step):\n        torch.save({k: m.state_dict() for k, m in self.modules.items()}, self.fname.format(step))\n"
    )
    text = """\
import torch
import torch.nn as nn

from checkpoint import CheckpointIO


def main(loader):
    net = nn.Linear(4, 1)
    opt = torch.optim.Adam(net.parameters())
    ckptios = [CheckpointIO("{}_net.ckpt", net=net), CheckpointIO("{}_opt.ckpt", opt=opt)]
    for step, x in enumerate(loader):
        net(x).mean().backward()
        opt.step()
        for ckptio in ckptios:
            ckptio.save(step)
"""
    result = _convert(tmp_path, text)
    assert "            if ddpify.is_main_process():\n                ckptio.save(step)\n" in result.output, result.output


_ALGORITHMS = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class ERM(nn.Module):
    def __init__(self, hparams):
        super().__init__()
        self.featurizer = nn.Linear(4, 8)
        self.classifier = nn.Linear(8, 3)
        self.network = nn.Sequential(self.featurizer, self.classifier)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=hparams["lr"])

    def update(self, x, y):
        loss = F.cross_entropy(self.network(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


class DANN(nn.Module):
    def __init__(self, hparams):
        super().__init__()
        self.featurizer = nn.Linear(4, 8)
        self.discriminator = nn.Linear(8, 2)
        self.disc_opt = torch.optim.Adam(list(self.discriminator.parameters()), lr=hparams["lr"])
        self.gen_opt = torch.optim.Adam(self.featurizer.parameters(), lr=hparams["lr"])

    def update(self, x, d):
        loss = F.cross_entropy(self.discriminator(self.featurizer(x)), d)
        self.disc_opt.zero_grad()
        self.gen_opt.zero_grad()
        loss.backward()
        self.disc_opt.step()
        self.gen_opt.step()


class URM(ERM):
    def __init__(self, hparams):
        ERM.__init__(self, hparams)
        self._setup_adversarial_net()

    def _setup_adversarial_net(self):
        self.discriminator = nn.Linear(8, 1)
        self.discriminator_opt = torch.optim.SGD(self.discriminator.parameters(), lr=0.1)

    def update(self, x, y):
        loss = self.discriminator(self.featurizer(x)).mean()
        self.discriminator_opt.zero_grad()
        loss.backward()
        self.discriminator_opt.step()
"""


def test_module_classes_wrap_what_their_constructors_train_at_their_end(tmp_path: Path) -> None:
    """DomainBed's algorithms (a module converted alongside a script that picks the class by name
    and moves it: ``algorithm.to(device)``): each class's trained attributes are wrapped at the
    end of its constructor, on this rank's device first, also when a set-up method the
    constructor calls builds them (URM); ``self.discriminator`` of DANN and of URM are two models."""
    script = tmp_path / "algorithms.py"
    script.write_text(_ALGORITHMS)
    result = convert_source(_ALGORITHMS, filename=str(script), trains_elsewhere=True)
    out = result.output
    assert "        self.network = ddpify.prepare_model(self.network, on_rank_device=True)\n" in out
    assert out.count("self.discriminator = ddpify.prepare_model(self.discriminator, on_rank_device=True)") == 2
    assert "        self._setup_adversarial_net()\n        self.discriminator = ddpify.prepare_model(" in out
    assert "        self.featurizer = ddpify.prepare_model(self.featurizer, on_rank_device=True)\n" in out  # DANN's
    assert not [m for m in result.manual if "not wrapped" in m.why], result.manual
    assert convert_source(out, filename=str(script), trains_elsewhere=True).output == out


def test_a_net_the_class_trains_through_its_own_methods_stays_unwrapped_and_said(tmp_path: Path) -> None:
    """MUNIT's shape: ``self.gen_a = Gen()`` and its optimizer in the trainer's constructor, but
    the steps call ``self.gen_a.encode(x)`` / ``.decode(z)``, never its forward: wrapped, those
    would train around DDP (the runtime's guard stops the first step). Held, each call named,
    and the calls left as written (no ``ddpify.unwrap`` for a model nothing wraps)."""
    (tmp_path / "nets.py").write_text(
        "import torch.nn as nn\n\n\nclass Gen(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.enc, self.dec = nn.Linear(4, 2), nn.Linear(2, 4)\n\n    def encode(self, x):\n        return self.enc(x)\n\n"
        "    def decode(self, z):\n        return self.dec(z)\n"
    )
    text = """\
import torch
import torch.nn as nn

from nets import Gen


class Trainer(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.gen_a = Gen()
        self.gen_opt = torch.optim.Adam(self.gen_a.parameters(), lr=lr)

    def gen_update(self, x_a):
        self.gen_opt.zero_grad()
        loss = (self.gen_a.decode(self.gen_a.encode(x_a)) - x_a).pow(2).mean()
        loss.backward()
        self.gen_opt.step()
"""
    script = tmp_path / "trainer.py"
    script.write_text(text)
    result = convert_source(text, filename=str(script), trains_elsewhere=True)
    assert "prepare_model" not in result.output and "ddpify.unwrap" not in result.output
    assert {m.why.split("(")[0] for m in result.manual} >= {"self.gen_a.encode", "self.gen_a.decode"}, result.manual


def test_a_method_called_for_its_effect_is_no_bypass(tmp_path: Path) -> None:
    """DomainBed's Fish: ``self.network.reset_weights(meta_weights)`` copies weights into the
    net (a statement, its result unused): no forward runs around the wrapper, so the net is
    wrapped at the constructor's end and the call reaches the model through ``ddpify.unwrap``."""
    (tmp_path / "nets.py").write_text(
        "import copy\n\nimport torch.nn as nn\n\n\nclass WholeFish(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.net = nn.Linear(4, 3)\n\n    def reset_weights(self, weights):\n        self.load_state_dict(copy.deepcopy(weights))\n\n"
        "    def forward(self, x):\n        return self.net(x)\n"
    )
    text = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

from nets import WholeFish


class Fish(nn.Module):
    def __init__(self, lr):
        super().__init__()
        self.network = WholeFish()
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=lr)

    def update(self, x, y, meta_weights):
        loss = F.cross_entropy(self.network(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.network.reset_weights(meta_weights)
"""
    script = tmp_path / "algorithms.py"
    script.write_text(text)
    result = convert_source(text, filename=str(script), trains_elsewhere=True)
    assert "self.network = ddpify.prepare_model(self.network, on_rank_device=True)" in result.output
    assert "ddpify.unwrap(self.network).reset_weights(meta_weights)" in result.output
    assert not [m for m in result.manual if "not wrapped" in m.why], result.manual
