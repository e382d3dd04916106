"""ddpify.analysis.models: which objects are trained models (their parameters reach an optimizer,
or they are wrapped), where they are built, moved, loaded and wrapped, which calls bypass DDP's
forward, which submodules forward never uses, and where a wrap belongs (last placement).
Each idea is written several ways: the names must not matter."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from ddpify.analysis import Analysis
from ddpify.analysis.models import Model, ModelFlow
from ddpify.tree.metadata import FastMetadata

LOOP = """
for x, y in loader:
    loss = crit({forward}, y)
    loss.backward()
    opt.step()
"""


def analyse(text: str) -> Analysis:
    return Analysis(FastMetadata(cst.parse_module(textwrap.dedent(text))))


def flow(text: str) -> ModelFlow:
    return analyse(text).models


def only(text: str) -> Model:
    models = flow(text).models
    assert len(models) == 1, [m.key for m in models]
    return models[0]


def code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def lines(sites) -> list[int]:  # type: ignore[no-untyped-def]
    return [s.line for s in sites]


def placed_after(text: str, model: Model | None = None) -> tuple[str | None, str]:
    """(first line of the statement the wrap follows, reason)."""
    models = flow(text)
    placement = models.last_placement(model or models.models[0])
    statement = code(placement.statement).strip().splitlines()[0] if placement.statement is not None else None
    return statement, placement.reason


# ---------------------------------------------------------------------- which models
@pytest.mark.parametrize(
    "optimizer",
    [
        "torch.optim.Adam(net.parameters(), lr=1e-3)",
        "optim.SGD(params=net.parameters(), lr=0.1)",
        "AdamW([{'params': net.parameters(), 'lr': 1e-4}], weight_decay=0.1)",
        "AdamW(filter(lambda p: p.requires_grad, net.parameters()))",
        "torch.optim.RMSprop(list(net.named_parameters()))",
        "Lion(net.parameters())",
    ],
)
def test_a_module_whose_parameters_reach_an_optimizer(optimizer: str) -> None:
    text = f"""
        import torch
        import torch.optim as optim
        from torch.optim import AdamW
        from lion_pytorch import Lion
        net = Net()
        opt = {optimizer}
    """
    model = only(text)
    assert model.key == "net"
    assert lines(model.constructed_at) == [6] and lines(model.optimizers) == [7]


def test_a_scheduler_or_a_non_optimizer_is_no_optimizer() -> None:
    text = """
        import torch
        net = Net()
        sched = torch.optim.lr_scheduler.StepLR(net.parameters(), 10)
        count = sum(p.numel() for p in net.parameters())
    """
    assert flow(text).models == []


@pytest.mark.parametrize(
    "params",
    [
        "params = list(encoder.parameters()) + list(decoder.parameters())\nopt = torch.optim.Adam(params)",
        "opt = torch.optim.Adam(itertools.chain(encoder.parameters(), decoder.parameters()))",
        "groups = [{'params': encoder.parameters()}, {'params': decoder.parameters(), 'lr': 1e-4}]\nopt = torch.optim.SGD(groups, lr=0.1)",
        "decay = []\nfor n, p in encoder.named_parameters():\n    decay.append(p)\ndecay += list(decoder.parameters())\nopt = torch.optim.AdamW([{'params': decay}])",
    ],
)
def test_several_models_given_to_one_optimizer(params: str) -> None:
    text = "import itertools\nimport torch\nencoder = Encoder()\ndecoder = Decoder()\n" + params + "\n"
    assert [m.key for m in flow(text).models] == ["encoder", "decoder"]


def test_an_optimizer_built_by_a_function_of_the_file_that_receives_the_model() -> None:
    text = """
        import torch
        def make_optimizer(module, cfg):
            decay = [p for p in module.parameters() if p.dim() > 1]
            return torch.optim.AdamW(decay, lr=cfg.lr)
        def main(cfg):
            classifier = Classifier()
            optimizer = make_optimizer(classifier, cfg)
    """
    model = only(text)
    assert model.references[:2] == ("classifier", "module")
    assert lines(model.constructed_at) == [7]


def test_an_optimizer_a_model_builds_for_itself() -> None:
    text = """
        import torch
        import torch.nn as nn
        class GPT(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.head = nn.Linear(4, 4)
            def forward(self, x):
                return self.head(x)
            def configure_optimizers(self, lr):
                return torch.optim.AdamW(self.parameters(), lr=lr)
        gpt = GPT(config)
        optimizer = gpt.configure_optimizers(3e-4)
    """
    model = only(text)
    assert model.key == "gpt" and "self" in model.references  # named as the script names it, not `self` of its class
    assert model.class_def is not None and model.class_def.name.value == "GPT"
    assert lines(model.constructed_at) == [12]


@pytest.mark.parametrize(
    "wrap",
    [
        "from torch.nn.parallel import DistributedDataParallel as DDP\nmodel = DDP(model, device_ids=[rank])",
        "import torch.nn as nn\nmodel = nn.parallel.DistributedDataParallel(model)",
        "import torch.nn as nn\nmodel = nn.DataParallel(model)",
        "import ddpify.runtime as ddpify\nmodel = ddpify.prepare_model(model)",
        "import torch\nwrapped = torch.nn.parallel.DistributedDataParallel(module=model)",
    ],
)
def test_a_wrapped_module_is_a_model(wrap: str) -> None:
    text = "model = ResNet()\n" + wrap + "\n"
    model = only(text)
    assert model.key == "model" and lines(model.wraps) == [3] and model.optimizers == ()


def test_two_models_of_one_factory_stay_two() -> None:
    text = """
        import torch
        def make(width):
            return Net(width)
        netG = make(64)
        netD = make(32)
        optG = torch.optim.Adam(netG.parameters())
        optD = torch.optim.Adam(netD.parameters())
    """
    models = flow(text).models
    assert [m.key for m in models] == ["netG", "netD"]
    assert [lines(m.constructed_at) for m in models] == [[4], [4]]  # built by the same line, twice


def test_only_part_of_a_model_trained() -> None:
    model = only("import torch\nnet = Net()\nopt = torch.optim.SGD(net.fc.parameters(), lr=1)\n")
    assert (model.key, model.parts) == ("net", ("fc",))


# ---------------------------------------------------------------------- what happens to it
def test_construction_moves_loads_and_wraps() -> None:
    text = """
        import torch
        import ddpify.runtime as ddpify
        from torch.nn.parallel import DistributedDataParallel
        def restore(m, path):
            m.load_state_dict(torch.load(path))
        net = Net().cuda()
        net.to(device)
        restore(net, "a.pt")
        ddpify.load_state_dict(net, state)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        net = DistributedDataParallel(net, device_ids=[0])
        net.module.load_state_dict(state)
    """
    model = only(text)
    assert lines(model.constructed_at) == [7]
    assert lines(model.moves) == [7, 8]
    assert lines(model.loads) == [6, 10, 13]
    assert lines(model.wraps) == [12]
    assert [s.function for s in model.loads] == ["restore", None, None]


def test_a_model_handed_to_a_class_that_moves_it() -> None:
    text = """
        import torch
        class Trainer:
            def __init__(self, model, gpu_id, loader):
                self.gpu_id = gpu_id
                self.model = model.to(gpu_id)
                self.loader = loader
                self.optimizer = torch.optim.SGD(self.model.parameters(), lr=1e-3)
            def train(self, epochs):
                for epoch in range(epochs):
                    for source, targets in self.loader:
                        loss = torch.nn.functional.cross_entropy(self.model(source), targets)
                        loss.backward()
        def main(gpu_id):
            model = Net()
            trainer = Trainer(model, gpu_id, make_loader())
            trainer.train(10)
    """
    model = only(text)
    assert model.key == "self.model" and model.references[:2] == ("model", "self.model")
    assert [(s.line, s.function) for s in model.moves] == [(6, "Trainer.__init__")]
    assert [(s.line, s.function) for s in model.forward_calls] == [(12, "Trainer.train")]
    statement, reason = placed_after(text)
    assert statement == "self.model = model.to(gpu_id)"
    assert reason == "after model.to(gpu_id) at line 6 in Trainer.__init__()"


@pytest.mark.parametrize(
    "held, expected",
    [
        ("nets = [net_a, net_b]\nfor n in nets:\n    n.cuda()", "list"),
        ("pair = (net_a, net_b)\nfor n in pair:\n    n.cuda()", "tuple"),
        ("nets = {'a': net_a, 'b': net_b}\nfor n in nets.values():\n    n.cuda()", "dict"),
        ("nets = {}\nnets['a'] = net_a\nnets['b'] = net_b\nfor name, n in nets.items():\n    n.cuda()", "dict"),
    ],
)
def test_models_held_in_a_container_are_reported_as_such(held: str, expected: str) -> None:
    text = f"import torch\nnet_a = Net()\nnet_b = Net()\n{held}\nopt = torch.optim.SGD(list(net_a.parameters()) + list(net_b.parameters()), lr=1)\n"
    models = flow(text).models
    assert [m.key for m in models] == ["net_a", "net_b"]
    assert [m.container for m in models] == [expected, expected]
    assert all(lines(m.moves) == [held.count("\n") + 4] for m in models)  # the move of each element


def test_models_built_inside_a_dict() -> None:
    text = """
        import torch
        models = {"g": Generator(), "d": Discriminator()}
        opt_g = torch.optim.Adam(models["g"].parameters())
        opt_d = torch.optim.Adam(models["d"].parameters())
        models["g"].to(device)
    """
    g, d = flow(text).models
    assert (g.key, g.container, lines(g.moves)) == ('models["g"]', "dict", [6])
    assert (d.key, d.container, d.moves) == ('models["d"]', "dict", ())


def test_a_model_only_saved_in_a_dict_is_not_held_in_one() -> None:
    text = "import torch\nnet = Net()\nopt = torch.optim.SGD(net.parameters(), lr=1)\ntorch.save({'net': net}, 'x.pt')\n"
    assert only(text).container is None


# ---------------------------------------------------------------------- calls on the training path
@pytest.mark.parametrize(
    "forward, bypass",
    [
        ("model(x)", None),
        ("model.forward(x)", None),
        ("model.decode(model.encode(x))", ["encode", "decode"]),
        ("model.module.forward(x)", ["forward"]),
        ("model.module(x)", ["forward"]),
        ("model.module.encode(x)", ["encode"]),
        ("model.encoder(x)", ["encoder"]),
        ("model.backbone.forward(x)", ["backbone.forward"]),
    ],
)
def test_forward_through_the_model_or_around_it(forward: str, bypass: list[str] | None) -> None:
    text = "import torch\nmodel = VAE()\nopt = torch.optim.Adam(model.parameters())\n" + LOOP.format(forward=forward)
    model = only(text)
    if bypass is None:
        assert lines(model.forward_calls) == [6] and model.bypasses == ()
    else:
        assert [b.method for b in model.bypasses] == bypass and model.forward_calls == ()
        assert {b.line for b in model.bypasses} == {6}
        assert all(b.through_module == ("module" in forward) for b in model.bypasses)


@pytest.mark.parametrize(
    "call, bypass",
    [
        ("model.backbone.layer1(x)", ["backbone.layer1"]),
        ("model.stride.max() * model(x)", []),
        ("model(x) * model.scales.cpu()", []),
        ("model.head(x)", ["head"]),
    ],
)
def test_deeper_calls_count_only_through_registered_submodules(call: str, bypass: list[str]) -> None:
    text = f"""
        import torch
        import torch.nn as nn
        class Detector(nn.Module):
            def __init__(self):
                super().__init__()
                self.backbone = Backbone()
                self.head = nn.Linear(4, 4)
                self.stride = torch.tensor([8, 16])
            def forward(self, x):
                return self.head(self.backbone(x))
        model = Detector()
        opt = torch.optim.SGD(model.parameters(), lr=1)
        class Backbone(nn.Module):
            pass
        for x in loader:
            ({call}).sum().backward()
    """
    assert [b.method for b in only(text).bypasses] == bypass


@pytest.mark.parametrize(
    "method, bypass",
    [
        ("def init_hidden(self, batch):\n    return torch.zeros(1, batch, 16)", False),
        ("def init_hidden(self, batch):\n    return torch.zeros(1, batch, self.hidden)", False),
        ("def init_hidden(this, batch):\n    return this.zeros(batch)\ndef zeros(self, batch):\n    return torch.zeros(batch, self.hidden)", False),
        ("def init_hidden(self, batch):\n    return self.rnn.weight_hh_l0.new_zeros(1, batch, 16)", True),
        ("def init_hidden(self, batch):\n    return self.h0.expand(1, batch, 16)", True),
        ("def init_hidden(self, batch):\n    return self.start.repeat(batch, 1)", True),
        ("def init_hidden(self, batch):\n    return self.embed(batch)\ndef embed(self, batch):\n    return self.rnn(batch)", True),
        ("def init_hidden(self, batch):\n    return next(self.parameters()).new_zeros(batch)", True),
        ("def init_hidden(self, batch):\n    return helper(self, batch)", True),
    ],
    ids=["no-self", "data-attribute", "other-self-name-and-helper", "submodule", "parameter", "buffer", "helper-uses-submodule", "module-api", "self-handed-over"],
)
def test_own_methods_that_read_no_parameter_are_no_bypass(method: str, bypass: bool) -> None:
    """A method of the model called on the training path bypasses DDP only if it can reach a
    parameter (a submodule, an nn.Parameter, anything unproven); one that only builds tensors
    from plain attributes averages nothing away."""
    method = textwrap.indent(method, " " * 12).lstrip()
    text = f"""
        import torch
        import torch.nn as nn
        class RNN(nn.Module):
            def __init__(self):
                super().__init__()
                self.hidden = 16
                self.rnn = nn.GRU(8, 16)
                self.h0 = nn.Parameter(torch.zeros(1, 1, 16))
                self.register_buffer("start", torch.zeros(1, 16))
            {method}
            def forward(self, x, h):
                return self.rnn(x, h)[0]
        model = RNN()
        opt = torch.optim.SGD(model.parameters(), lr=1)
        def start(x):
            return model.init_hidden(x.size(1))
        for x in loader:
            loss = model.init_hidden(x.size(1)).sum()
            loss.backward()
    """
    model = only(text)
    # a call that reaches a parameter bypasses DDP, unless the converter can run it as the
    # wrapper's forward (``through``: the only use of the model in its step)
    through = [c.func.attr.value for c in model.through]
    assert [b.method for b in model.bypasses] + through == (["init_hidden"] if bypass else [])
    assert "init_hidden" in [u.method for u in model.own_uses]  # the wrapper lacks it either way


@pytest.mark.parametrize(
    "step, bypass",
    [
        ("h = model.init_hidden(x.size(0))\n    model(x, h).sum().backward()", []),
        ("z = model.encode(x)\n    (model(x) + model.decode(z)).sum().backward()", []),
        ("model.decode(model.encode(x)).sum().backward()", ["encode", "decode"]),
        ("h = model.init_hidden(x.size(0))\n    model.module(x, h).sum().backward()", ["init_hidden", "forward"]),
    ],
    ids=["init-then-forward", "encode-beside-forward", "no-forward", "inner-forward"],
)
def test_own_methods_beside_a_forward_through_the_wrapper_are_no_bypass(step: str, bypass: list[str]) -> None:
    """A step that also runs the wrapper's forward arms DDP's reducer: every parameter's
    gradient is averaged, those an own method touched too (the class is not even visible here)."""
    text = f"import torch\nfrom models import Seq\nmodel = Seq()\nopt = torch.optim.SGD(model.parameters(), lr=1)\nfor x in loader:\n    {step}\n"
    assert [b.method for b in only(text).bypasses] == bypass


def test_own_method_calls_without_gradients_in_the_loop_are_no_bypass() -> None:
    text = """
        import torch
        model = LM()
        opt = torch.optim.Adam(model.parameters())
        for i, x in enumerate(loader):
            model.train()
            model(x).sum().backward()
            if i % 100 == 0:
                model.eval()
                sample = model.generate(prompt)
            with torch.no_grad():
                model.encode(x)
    """
    model = only(text)
    assert model.bypasses == () and lines(model.forward_calls) == [7]


def test_every_use_of_a_member_the_wrapper_lacks() -> None:
    text = """
        import torch
        model = VAE()
        opt = torch.optim.Adam(model.parameters())
        for x in loader:
            recon = model(x)
            recon.sum().backward()
        with torch.no_grad():
            sample = model.decode(torch.randn(4, model.latent_dim))
            print(model.module.config.width, model.state_dict())
    """
    model = only(text)
    assert model.bypasses == ()
    own = [(b.line, b.method, b.called, b.through_module) for b in model.own_uses]
    assert own == [(9, "decode", True, False), (9, "latent_dim", False, False), (10, "config", False, True)]


def test_an_encoder_decoder_trained_through_its_own_methods() -> None:
    text = """
        import torch
        import torch.nn as nn
        class AutoEncoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = nn.Linear(8, 2)
                self.dec = nn.Linear(2, 8)
            def encode(self, x):
                return self.enc(x)
            def decode(self, z):
                return self.dec(z)
            def forward(self, x):
                return self.decode(self.encode(x))
        class Runner:
            def __init__(self, net):
                self.net = net
                self.opt = torch.optim.Adam(self.net.parameters())
            def step(self, batch):
                z = self.net.encode(batch)
                loss = (self.net.decode(z) - batch).pow(2).mean()
                loss.backward()
        runner = Runner(AutoEncoder())
        for batch in loader:
            runner.step(batch)
        with torch.no_grad():
            sample = runner.net.decode(noise)
    """
    model = only(text)
    assert [(b.method, b.line) for b in model.bypasses] == [("encode", 20), ("decode", 21)]
    assert model.possibly_unused == ()


def test_calls_outside_training_are_no_bypass() -> None:
    text = """
        import torch
        model = VAE()
        opt = torch.optim.Adam(model.parameters())
        @torch.no_grad()
        def evaluate(loader):
            for x in loader:
                model.decode(model.encode(x))
        for x in train_loader:
            model(x).sum().backward()
        model.eval()
        z = model.encode(example)
    """
    model = only(text)
    assert model.bypasses == () and lines(model.forward_calls) == [10]


# ---------------------------------------------------------------------- unused parameters
@pytest.mark.parametrize(
    "forward, unused",
    [
        ("return self.fc1(x)", ("fc2", "scale")),
        ("return self.fc2(self.fc1(x)) * self.scale", ()),
        ("return self.head(self.fc1(x)) * self.scale", ()),  # fc2 is used by head, which forward calls
        ("return self.fc1(x) * self.scale", ("fc2",)),
        ("return sum(m(x) for m in self.children())", ()),
        ("return getattr(self, 'fc' + str(k))(x)", ()),
    ],
)
def test_submodules_forward_never_uses(forward: str, unused: tuple[str, ...]) -> None:
    text = f"""
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(4, 4)
                self.fc2 = nn.Linear(4, 2)
                self.scale = nn.Parameter(torch.ones(1))
                self.seq = nn.Sequential(self.fc1)
                self.size = 4
            def head(self, h):
                return self.fc2(h)
            def forward(self, x):
                {forward}
        net = Net()
        opt = torch.optim.SGD(net.parameters(), lr=1)
    """
    assert only(text).possibly_unused == unused  # seq holds fc1's parameters: never reported


def test_no_unused_report_without_the_classes_own_forward() -> None:
    text = """
        import torch
        from torchvision.models import resnet18
        class Base(torch.nn.Module):
            def forward(self, x):
                return x
        class Child(Base):
            def __init__(self):
                super().__init__()
                self.extra = torch.nn.Linear(2, 2)
        a, b = Child(), resnet18()
        opt = torch.optim.SGD([*a.parameters(), *b.parameters()], lr=1)
    """
    assert [m.possibly_unused for m in flow(text).models] == [(), ()]


# ---------------------------------------------------------------------- last placement
def test_placement_after_the_last_move_in_the_same_function() -> None:
    text = """
        import torch
        def main():
            model = Net()
            opt = torch.optim.SGD(model.parameters(), lr=1)
            model.cuda()
            print(model)
            for x in loader:
                model(x).sum().backward()
    """
    assert placed_after(text) == ("model.cuda()", "after model.cuda() at line 6 in main()")


def test_placement_after_the_whole_branch_that_moves_or_loads() -> None:
    text = """
        import torch
        model = Net()
        if torch.cuda.is_available():
            model = model.cuda()
        if args.resume:
            model.load_state_dict(torch.load(args.resume))
        opt = torch.optim.SGD(model.parameters(), lr=1)
        for x in loader:
            model(x).sum().backward()
    """
    statement, reason = placed_after(text)
    assert statement == "if args.resume:"
    assert reason == "after model.load_state_dict(torch.load(args.resume)) at line 7"


def test_placement_after_alternative_constructions() -> None:
    text = """
        import torch
        def main(resume):
            if resume is None:
                head = Head()
                opt = torch.optim.Adam(head.parameters())
            else:
                head = torch.load(resume)
                opt = torch.optim.Adam(head.parameters())
            for x in loader:
                head(x).sum().backward()
    """
    model = only(text)
    assert lines(model.constructed_at) == [5, 8]
    statement, _ = placed_after(text)
    assert statement == "if resume is None:"


def test_a_model_built_or_read_out_of_a_checkpoint_is_one_model() -> None:
    text = """
        import torch
        def main(path):
            if path is None:
                encoder = Encoder()
                start = 0
            else:
                checkpoint = torch.load(path)
                encoder = checkpoint["encoder"]
                start = checkpoint["epoch"]
            encoder = encoder.to(device)
            opt = torch.optim.Adam(encoder.parameters())
    """
    model = only(text)
    assert [(s.line, code(s.node)) for s in model.constructed_at] == [(5, "Encoder()"), (8, "torch.load(path)")]
    assert placed_after(text) == ("encoder = encoder.to(device)", "after encoder.to(device) at line 11 in main()")


def test_data_parallel_places_nothing() -> None:
    text = """
        import torch
        net = Net()
        if torch.cuda.device_count() > 1:
            net = torch.nn.DataParallel(net)
        if resume:
            net.load_state_dict(torch.load("ckpt.pt")["net"])
        net.cuda()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        def train(epoch):
            for x, y in loader:
                crit(net(x), y).backward()
        for epoch in range(10):
            train(epoch)
    """
    model = only(text)
    assert lines(model.wraps) == [5]
    assert placed_after(text) == ("net.cuda()", "after net.cuda() at line 8")


def test_placement_of_a_model_a_function_builds_and_returns() -> None:
    text = """
        import torch
        def build(device):
            net = Net()
            net.to(device)
            return net
        def main():
            model = build("cuda")
            opt = torch.optim.SGD(model.parameters(), lr=1)
            for x in loader:
                model(x).sum().backward()
    """
    model = only(text)
    assert [(s.line, s.function) for s in model.constructed_at] == [(4, "build")]
    assert placed_after(text) == ('model = build("cuda")', 'after build("cuda") at line 8 in main(), which runs net.to(device) at line 5')


def test_placement_after_a_helper_that_loads_the_model() -> None:
    text = """
        import torch
        def load_checkpoint(net, path):
            net.load_state_dict(torch.load(path))
        model = Net().cuda()
        load_checkpoint(model, "ckpt.pt")
        opt = torch.optim.SGD(model.parameters(), lr=1)
        for x in loader:
            model(x).sum().backward()
    """
    statement, reason = placed_after(text)
    assert statement == 'load_checkpoint(model, "ckpt.pt")'
    assert reason.startswith('after load_checkpoint(model, "ckpt.pt") at line 6, which runs net.load_state_dict(')


def test_moves_during_or_after_training_do_not_count() -> None:
    text = """
        import torch
        net = Net().to(device)
        opt = torch.optim.SGD(net.parameters(), lr=1)
        for epoch in range(3):
            for x in loader:
                net(x).sum().backward()
            net.cpu()
            torch.save(net.state_dict(), "a.pt")
            net.to(device)
        net.cpu()
    """
    model = only(text)
    assert lines(model.moves) == [3, 8, 10, 11]
    assert placed_after(text) == ("net = Net().to(device)", "after Net().to(device) at line 3")


def test_placement_before_an_existing_wrap() -> None:
    text = """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        model = Net()
        model.to(rank)
        model = DDP(model, device_ids=[rank])
        model.cuda()
    """
    assert placed_after(text)[0] == "model.to(rank)"


def test_placement_of_a_global_model_trained_in_a_function_called_later() -> None:
    text = """
        import torch
        model = GPT(config)
        model.to(device)
        def training_loop():
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
            for x, y in loader:
                model(x, y).backward()
        model.load_state_dict(state)
        training_loop()
    """
    assert placed_after(text) == ("model.load_state_dict(state)", "after model.load_state_dict(state) at line 9")


def test_a_move_inside_the_wrap_places_the_model() -> None:
    text = """
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP
        def main():
            model = DiT()
            model = DDP(model.to(device), device_ids=[rank])
            opt = torch.optim.AdamW(model.parameters())
    """
    statement, reason = placed_after(text)
    assert statement == "model = DDP(model.to(device), device_ids=[rank])"
    assert reason == "after model.to(device) at line 6 in main(), in the statement that wraps it"


def test_placement_unknown_when_a_method_moves_it_at_a_time_the_file_does_not_fix() -> None:
    text = """
        import torch
        class Trainer:
            def __init__(self, model):
                self.model = model
                self.opt = torch.optim.SGD(self.model.parameters(), lr=1)
            def setup(self):
                self.model.cuda()
            def fit(self):
                for x in loader:
                    self.model(x).sum().backward()
        Trainer(Net()).fit()
    """
    models = flow(text)
    placement = models.last_placement(models.models[0])
    assert not placement.known
    assert (
        placement.reason
        == "self.model.cuda() at line 8 in Trainer.setup() runs at a time this file does not fix against its use in training"
    )


def test_placement_unknown_without_anything_that_builds_the_model() -> None:
    text = """
        import torch
        def train(model, loader):
            opt = torch.optim.SGD(model.parameters(), lr=1)
            for x in loader:
                model(x).sum().backward()
    """
    model = only(text)
    assert model.constructed_at == ()
    assert model.unknown == ("it may be the parameter model of train(), which no call in this file passes",)
    placement = flow(text).last_placement(model)
    assert (placement.known, placement.reason) == (False, "nothing in this file builds, moves or loads it")


# ---------------------------------------------------------------------- unknown
def test_what_the_file_cannot_tie_to_a_model_is_reported() -> None:
    text = """
        import torch
        from solver import build_optimizer
        net = Net()
        optimizer = build_optimizer(net, cfg)
        other = torch.optim.SGD(params_from_elsewhere, lr=1)
        for x in loader:
            net(x).sum().backward()
            optimizer.step()
    """
    models = flow(text)
    assert models.models == []
    assert models.unknown == (
        "the optimizer at line 6 gets params_from_elsewhere, which this file does not tie to a model",
        "optimizer.step() at line 9 steps an optimizer that build_optimizer() builds at line 5, defined elsewhere: "
        "which model it trains is unknown (it is given net, cfg)",
    )


def test_a_scheduler_of_a_known_optimizer_is_not_reported() -> None:
    text = """
        import torch
        from utils import WarmUpLR
        net = Net()
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        warmup = WarmUpLR(optimizer, 500)
        for x in loader:
            net(x).sum().backward()
            optimizer.step()
            warmup.step()
    """
    assert flow(text).unknown == ()


def test_backward_without_any_optimizer_is_reported() -> None:
    text = (
        "for x in loader:\n    loss = net(x).sum()\n    loss.backward()\n    for p in net.parameters():\n        p.data -= 0.1 * p.grad\n"
    )
    assert flow(text).unknown == ("backward() at line 3, but no optimizer or wrap in this file says which model trains",)


def test_hand_offs_to_code_defined_elsewhere() -> None:
    text = "import torch\nfrom utils import load_weights\nnet = Net()\nload_weights(net, 'w.pt')\nprint(net)\nopt = torch.optim.SGD(net.parameters(), lr=1)\n"
    assert [(s.line, code(s.node)) for s in only(text).handoffs] == [(4, "load_weights(net, 'w.pt')")]


def test_model_of_a_spelling_or_an_expression() -> None:
    text = "import torch\nnet = Net()\nalias = net\nopt = torch.optim.SGD(alias.parameters(), lr=1)\n"
    models = flow(text)
    (model,) = models.models
    assert models.model_of("net") is model and models.model_of("alias") is model and models.model_of("opt") is None
    occurrence = model.occurrences[-1].node
    assert models.model_of(occurrence) is model


def test_an_optimizer_a_model_of_another_file_builds_on_self_is_reported() -> None:
    text = """
        class Trainer:
            def run(self, model, config):
                self.optimizer = model.configure_optimizers(config)
                for x, y in loader:
                    model(x, y).backward()
                    self.optimizer.step()
    """
    models = flow(text)
    assert models.models == []
    assert models.unknown == (
        "self.optimizer.step() at line 7 steps an optimizer that model.configure_optimizers() builds at line 4, "
        "defined elsewhere: which model it trains is unknown (it is given config)",
    )
    [(step, made)] = models.optimizers.stepped_elsewhere()
    assert (code(step), code(made)) == ("self.optimizer.step()", "model.configure_optimizers(config)")


# ---------------------------------------------------------------- models trained inside another module
_HOLDER = """
import torch
import torch.nn as nn
from engine import fit


class {holder}(nn.Module):
    def __init__(self, {inner}, teacher):
        super().__init__()
        self.{attribute} = {inner}
        self.teacher = teacher

    def forward(self, x):
        with torch.no_grad():
            target = self.teacher(x)
        return ((self.{attribute}(x) - target) ** 2).mean()


{inner} = nn.Linear(4, 4)
teacher = nn.Linear(4, 4)
held = {holder}({inner}, teacher)
opt = torch.optim.SGD({inner}.parameters(), lr=0.1)
{training}
"""
_RUN_HOLDER = """
for x in loader:
    loss = held(x)
    loss.backward()
    opt.step()
"""


@pytest.mark.parametrize(
    ("holder", "inner", "attribute"), [("Distiller", "s_net", "s_net"), ("ModelWithLoss", "model", "model"), ("Pair", "student", "net")]
)
def test_a_model_run_only_by_the_module_holding_it_trains_inside_it(holder: str, inner: str, attribute: str) -> None:
    models = flow(_HOLDER.format(holder=holder, inner=inner, attribute=attribute, training=_RUN_HOLDER)).models
    by_key = {m.key: m for m in models}
    assert by_key[inner].trained_inside == "held"
    assert by_key["held"].parts == (attribute,)  # the optimizer steps that part of the holder
    assert by_key["held"].dropped == ("the gradient of self.teacher's output (it runs without gradients)",)


def test_a_holder_the_training_never_runs_is_no_model() -> None:
    """The model trains through code of another file; the module keeping it is never called:
    the model stays as it was (its origin and placement decide), the holder is not claimed."""
    models = flow(_HOLDER.format(holder="Tracker", inner="net", attribute="net", training="fit(net, opt, loader)")).models
    assert [m.key for m in models] == ["net"]
    assert models[0].trained_inside is None
