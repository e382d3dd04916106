"""Report lines (input line + reason) of rewrites whose golden output alone does not show why."""

from __future__ import annotations

import textwrap

import pytest

from ddpify.api import convert_source


def convert(source: str):
    return convert_source(textwrap.dedent(source))


HELPER_LOADERS = """\
    import torch
    from loaders import get_loaders

    def main():
        model = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        train_loader, val_loader = get_loaders("data")
        for epoch in range(2):
            for x, y in train_loader:
                optimizer.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                optimizer.step()
"""


@pytest.mark.parametrize(("batch", "said"), [("1", True), ("8", False)])
def test_a_helper_loader_of_single_items_says_its_batch_does_not_split(batch: str, said: bool) -> None:
    """Conv-TasNet's ``AudioDataLoader(dataset, batch_size=1)`` of pre-built minibatches: one
    item per step cannot be cut across the ranks, so each keeps its own (the report says so)."""
    script = HELPER_LOADERS.replace('get_loaders("data")', f'get_loaders("data", batch_size={batch})')
    result = convert(script)
    note = next(c.what for c in result.changes if c.what.startswith("train_loader is built in another file"))
    assert ("batch_size=1 does not split across the processes" in note) is said, note


def test_helper_loader_from_another_file_is_reported_with_line_and_reason():
    result = convert(HELPER_LOADERS)
    whats = {(c.line, c.what) for c in result.changes}
    assert (
        7,
        "train_loader is built in another file (get_loaders()) and trained on here: train_loader = ddpify.shard(train_loader) "
        "rebuilds it with a DistributedSampler at run time if it is a plain DataLoader; another batch iterator has each batch cut across "
        "the ranks; an object that keeps DataLoaders (and iterators over them) has them sharded in place",
    ) in whats
    assert (7, "val_loader is not trained on in this file (named val_loader): left unsharded, every rank evaluates the full set") in whats
    assert "val_loader = ddpify.shard" not in result.output
    assert "ddpify.set_epoch(train_loader, epoch)" in result.output


def test_helper_loader_keeps_per_process_batch_on_request():
    result = convert_source(textwrap.dedent(HELPER_LOADERS), per_process_batch=True)
    assert "train_loader = ddpify.shard(train_loader, per_process_batch=True)" in result.output


def test_local_functions_and_builtins_are_not_taken_for_loader_helpers():
    """Only the opaque helper's results are loaders of unknown role (decided at run time);
    what a local function or a builtin returns from them is the same object, never sharded
    a second time."""
    result = convert("""\
        import torch
        from loaders import get_pair

        def wrap(loader):
            return loader

        model = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        first_loader, second_loader = get_pair()
        train_loader = wrap(first_loader)
        loader = iter(second_loader)
    """)
    assert "train_loader = ddpify.shard" not in result.output
    assert "loader = ddpify.shard(loader" not in result.output
    assert "first_loader = ddpify.shard(first_loader, only_when_training=True)" in result.output
    assert "second_loader = ddpify.shard(second_loader, only_when_training=True)" in result.output


def test_unnamed_results_of_a_helper_are_not_sharded():
    """Nothing says a helper's result is a loader (no loader name, no training loop over it):
    left as it is."""
    result = convert("""\
        import torch
        from loaders import get_pair

        model = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        first, second = get_pair()
        print(len(first), len(second))
    """)
    assert "ddpify.shard" not in result.output


def test_checkpoint_helper_of_another_file_is_guarded_and_reported():
    result = convert("""\
        import torch
        import utils
        from utils import save_checkpoint

        model = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(2):
            model(torch.randn(4, 2)).sum().backward()
            optimizer.step()
            save_checkpoint(epoch, model)
            path = utils.save_checkpoint(model)
            torch.save(model.state_dict(), "plain.pt")
    """)
    whats = {(c.line, c.what) for c in result.changes}
    assert (10, "save_checkpoint(): checkpoint code in another file: guarded to rank 0; it must not call collectives") in whats
    assert (10, "model handed to checkpoint code as ddpify.unwrap(model): the plain module, not the DDP wrapper") in whats
    assert "    if ddpify.is_main_process():\n        save_checkpoint(epoch, ddpify.unwrap(model))\n" in result.output
    assert [(item.line, item.why) for item in result.manual] == [
        (
            11,
            "utils.save_checkpoint() (another file; by its name it saves a checkpoint) runs on every rank, and its result is "
            "used here: the statement cannot go under a rank-0 guard, the name would be unbound on the other ranks",
        )
    ]


def test_library_and_guarded_saves_are_not_checkpoint_helpers():
    result = convert("""\
        import torch
        import torchvision
        from utils import save_checkpoint

        model = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.randn(4, 2)).sum().backward()
        optimizer.step()
        torchvision.utils.save_image(torch.zeros(3, 2, 2), "grid.png")
        if rank == 0:
            save_checkpoint(model)
    """)
    # save_image is a once-only write (side effects), not checkpoint code in another file;
    # the save already behind a rank test stays as it is
    assert result.output.count("is_main_process") == 1
    assert not [c for c in result.changes if "checkpoint code in another file" in c.what]
    assert "    save_checkpoint(model)\n" in result.output


def test_hand_written_updates_name_the_module():
    result = convert("""\
        import torch

        layer = torch.nn.Linear(3, 1)
        for step in range(100):
            layer.zero_grad()
            layer(torch.randn(8, 3)).pow(2).mean().backward()
            for p in layer.parameters():
                p.data.add_(-0.1 * p.grad)
    """)
    assert "prepare_model" not in result.output
    [item] = result.manual
    assert item.line == 6
    assert item.why.endswith("(parameters updated by hand: layer)")
    assert item.todo.startswith("wrap it after it is built: layer = ddpify.prepare_model(layer)")


EPOCHS_UNDER_ANOTHER_NAME = """\
    import torch
    from torch.utils.data import DataLoader

    train_loader = DataLoader(list(range(8)), batch_size=2, shuffle=True)
    model = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train(loader):
        for x in loader:
            model(x.float().view(-1, 1)).sum().backward()
            optimizer.step()

    for t in range(args.n_epochs):
        train(train_loader)
    for step in range(args.max_steps):
        train(train_loader)
"""


def test_loop_over_an_epoch_count_is_an_epoch_loop_whatever_its_variable():
    result = convert(EPOCHS_UNDER_ANOTHER_NAME)
    whats = {(c.line, c.what) for c in result.changes}
    assert (13, "reshuffle train_loader every epoch: ddpify.set_epoch(train_loader, t)") in whats
    assert result.output.count("set_epoch") == 1  # range(args.max_steps) counts steps


def test_stdout_writes_without_an_import_count_only_where_a_star_import_may_bring_sys():
    training = """\
        import torch
        model = torch.nn.Linear(1, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

        def log(sys, text):
            sys.stdout.write(text)

        sys.stdout.write("start")
    """
    starred = convert("from utils import *\n" + textwrap.dedent(training))
    assert {(c.line, c.what) for c in starred.changes} >= {
        (9, "sys.stdout.write on rank 0 only: under `if ddpify.is_main_process():` (every rank would write the same output)")
    }
    assert "        sys.stdout.write(text)\n" not in starred.output  # a parameter named sys is not the module
    assert "    sys.stdout.write(text)\n" in starred.output
    assert "is_main_process" not in convert(training).output  # no star import: sys is just undefined


OUTPUT_HELPERS = """\
    import matplotlib.pyplot as plt
    import torch

    def show(values):
        plt.plot(values)
        plt.show()

    def predict_and_show(module, x):
        plt.plot(module(x).detach())
        plt.savefig("pred.png")

    net = torch.nn.Linear(1, 1)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    x = torch.randn(4, 1)
    show([1, 2])
    predict_and_show(net, x)
    values = show([3])
"""


def test_local_output_helper_call_is_guarded_and_one_running_the_model_is_reported():
    result = convert(OUTPUT_HELPERS)
    whats = {(c.line, c.what) for c in result.changes}
    assert (15, "show() (a helper of this file that writes output: plt.show) on rank 0 only: under `if ddpify.is_main_process():` (every rank would write the same output)") in whats
    assert "if ddpify.is_main_process():\n    show([1, 2])\n" in result.output
    assert "values = show([3])\n" in result.output  # a result used: not moved under a guard
    [item] = [m for m in result.manual if m.line == 16]
    assert item.why.startswith("predict_and_show() runs the trained model net (passed to it) and writes output on every rank")
    assert "\npredict_and_show(net, x)\n" in result.output


HANDED_TO_OTHER_FILES = """\
    import torch
    from utils import check_accuracy, init_weights, load_checkpoint, save_checkpoint

    def evaluate(model):
        print(model(torch.randn(2, 2)).sum())

    model = torch.nn.Linear(2, 1)
    init_weights(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        model(torch.randn(4, 2)).sum().backward()
        optimizer.step()
        check_accuracy(model)
        check_accuracy(model, epoch)
        evaluate(model)
        load_checkpoint("last.pt", model)
        save_checkpoint(model)
        if rank == 0:
            check_accuracy(model)
"""


def test_model_handed_to_another_files_function_is_reported_once_per_function():
    result = convert(HANDED_TO_OTHER_FILES)
    [item] = [m for m in result.manual if "another file" in m.why]
    assert (item.line, item.why) == (13, "check_accuracy() (another file) runs on every rank with model (the DDP model): what it writes (files, images, logs, progress bars) is written once per rank")
    assert item.todo == (
        "guard its writes inside it (if ddpify.is_main_process():), not the call: every rank must run the DDP model's forward; "
        "there it receives the DDP wrapper: reach the model's own methods and attributes other than forward "
        "through model.module (or ddpify.unwrap(model)), and only calls of its forward average gradients"
    )
    # init_weights gets the plain model (before the wrap), evaluate is this file's own code,
    # load and checkpoint helpers are handled by their own rules
    assert "    check_accuracy(model)\n" in result.output


def test_directory_named_after_the_clock_is_rank_zeros_on_every_rank():
    result = convert("""\
        import datetime
        import os
        import torch

        RUN = "run-" + str(datetime.datetime.now())

        def main(args):
            out = os.path.join(args.root, RUN)
            os.makedirs(out)
            os.makedirs(args.root)
            model = torch.nn.Linear(2, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    """)
    assert 'RUN = ddpify.agreed("run-" + str(datetime.datetime.now()))' in result.output  # rank 0's time on every rank
    assert not result.manual


def test_a_clock_read_in_place_is_reported_where_the_directory_is_created():
    """No assignment reads the clock once: each use would read it again, so it is reported."""
    result = convert("""\
        import datetime
        import os
        import torch

        def main(args):
            out = os.path.join(args.root, str(datetime.datetime.now()))
            for trial in range(3):
                os.makedirs(out + str(datetime.datetime.now()))
            model = torch.nn.Linear(2, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    """)
    assert [(m.line, m.why) for m in result.manual] == [
        (8, "the name of out + str(datetime.datetime.now()) uses the clock (datetime.datetime.now()): ranks may create different directories")
    ]
    assert result.manual[0].todo.startswith("compute it on rank 0 and broadcast it (torch.distributed.broadcast_object_list)")


def test_model_with_a_conditional_optimizer_is_wrapped_and_its_condition_reported():
    result = convert("""\
        import torch

        encoder = torch.nn.Linear(2, 2)
        head = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
        enc_opt = None if args.frozen else torch.optim.SGD(encoder.parameters(), lr=0.1)
        other = torch.optim.SGD(head.parameters()) if args.sgd else torch.optim.Adam(head.parameters())
        head(encoder(torch.randn(4, 2))).sum().backward()
    """)
    assert "encoder = ddpify.prepare_model(encoder)" in result.output
    assert [(m.line, m.why) for m in result.manual] == [
        (6, "encoder is trained only when args.frozen is false (its optimizer is conditional): "
            "ddpify.prepare_model wraps it only if it has trainable parameters at that point")
    ]


READ_BACK_HANDLE = """\
    import json
    import torch

    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        optimizer.zero_grad()
        model(torch.randn(4, 2)).sum().backward()
        optimizer.step()
        with open("state.json", "{mode}") as handle:
            {write}
            handle.seek(0)
            print(handle.read())
"""


@pytest.mark.parametrize("mode", ["w+", "r+", "a+"])
@pytest.mark.parametrize("write", ['json.dump({"step": step}, handle)', 'handle.write(str(step))', 'print(step, file=handle)'])
def test_writes_into_a_reported_handle_stay_on_every_rank(mode: str, write: str):
    """Every rank opens (and truncates) the file and reads it back: rank 0 writing alone would
    leave the others reading nothing. The handle is reported; the write into it is not moved."""
    result = convert(READ_BACK_HANDLE.format(mode=mode, write=write))
    assert any(item.line == 10 and "every rank" in item.why for item in result.manual), result.manual
    assert "is_main_process" not in result.output.split("with open")[1]
    assert not any(change.line == 11 for change in result.changes), result.changes


PER_RANK_FILES = """\
    import json
    import os
    from pathlib import Path

    import torch

    rank = int(os.environ.get("RANK", "0"))
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        optimizer.zero_grad()
        model(torch.randn(4, 2)).sum().backward()
        optimizer.step()
    {write}
"""


@pytest.mark.parametrize(
    "write",
    [
        'Path("out", f"result-{rank}.json").write_text(json.dumps({"step": step}))',
        "Path(f\"result-{os.environ.get('RANK', '0')}.json\").write_text('done')",
        'json.dump({"step": step}, open(f"state-{rank}.json", "w"))',
        'torch.save(model.state_dict(), f"model-{rank}.pt")',
    ],
    ids=["path-variable", "environment", "json-into-open", "torch-save"],
)
def test_a_file_that_names_its_rank_is_each_ranks_own(write: str):
    """Written per rank by design: not moved to rank 0 (which would lose the other ranks' files)."""
    result = convert(PER_RANK_FILES.format(write=write))
    assert not any(w in result.output for w in ("is_main_process", "rank_zero(open)", "ddpify.save(")), result.output


@pytest.mark.parametrize(
    "optimizer",
    [
        "optim = torch.optim.Adam(model.parameters(), lr=1e-3)",  # x-transformers: the module's alias rebound
        "opt = optim.SGD(model.parameters(), lr=0.1)",
        "opt = optim.SGD(params=model.parameters(), lr=0.1)",
    ],
)
def test_an_optimizer_tied_to_its_model_is_never_reported_untied(optimizer: str):
    """``optim.step()`` with ``import torch.optim as optim`` resolves to ``torch.optim.step``: not
    an optimizer's construction, so no "does not tie" item (a false one followed a real wrap)."""
    name = optimizer.split(" = ")[0]
    source = f"""\
    import torch
    import torch.optim as optim

    model = torch.nn.Linear(2, 1)
    {optimizer}
    for step in range(3):
        model(torch.randn(4, 2)).sum().backward()
        {name}.step()
        {name}.zero_grad()
    """
    result = convert(source)
    assert "ddpify.prepare_model(model)" in result.output
    assert not any("does not tie" in item.why for item in result.manual), result.manual


def test_an_optimizer_of_another_file_is_never_the_model_to_wrap():
    """sthalles SimCLR: ``self.optimizer`` comes from the caller, and its ``zero_grad()`` names
    no model; the item must not tell the user to wrap the optimizer."""
    source = """\
    import torch


    class SimCLR:
        def __init__(self, *args, **kwargs):
            self.model = kwargs["model"]
            self.optimizer = kwargs["optimizer"]

        def train(self, loader):
            for images in loader:
                loss = self.model(images).sum()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
    """
    result = convert(source)
    assert not any("prepare_model(self.optimizer)" in item.todo for item in result.manual), result.manual
    assert any(item.why.startswith("self.optimizer is stepped, but this file does not show where it is built") for item in result.manual)


def test_two_loops_over_one_loader_parameter_rebind_it_once() -> None:
    """A warm-up pass and the epoch loop both iterate the parameter: one ddpify.shard line,
    first in the function, and converting again adds nothing."""
    source = """\
    import torch


    def train(loader, epochs):
        model = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in loader:
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
        for epoch in range(epochs):
            for x, y in loader:
                opt.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                opt.step()
    """
    result = convert(source)
    assert result.output.count("loader = ddpify.shard(loader)") == 1, result.output
    assert "def train(loader, epochs):\n    loader = ddpify.shard(loader)\n" in result.output
    assert "ddpify.set_epoch(loader, epoch)" in result.output
    assert convert_source(result.output).output == result.output


def test_an_attribute_set_from_two_parameters_is_reported_not_sharded() -> None:
    """self.loader bound from the constructor and from swap(): no single place to rebind it,
    so the loop gets an item naming both, and nothing is sharded."""
    source = """\
    import torch


    class Runner:
        def __init__(self, loader):
            self.model = torch.nn.Linear(4, 1)
            self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
            self.loader = loader

        def swap(self, other):
            self.loader = other

        def fit(self, epochs):
            for epoch in range(epochs):
                for x, y in self.loader:
                    self.opt.zero_grad()
                    torch.nn.functional.mse_loss(self.model(x), y).backward()
                    self.opt.step()
    """
    result = convert(source)
    assert "ddpify.shard" not in result.output and "set_epoch" not in result.output
    (found,) = [i for i in result.manual if i.why.startswith("self.loader is set from loader of Runner.__init__(), other of Runner.swap()")]
    assert found.line == 15 and "not sharded: it comes from more than one place" in found.why
    assert any(i.line == 14 and "ddpify.set_epoch(self.loader, epoch)" in i.todo for i in result.manual)


def test_a_parameter_given_another_files_loader_is_rebound_in_the_function() -> None:
    """fit(model, get_loader("train")): no name here holds the helper's loader, but fit()'s
    parameter does: rebuilt first thing in fit(), reshuffled by fit()'s epoch loop."""
    source = """\
    import torch
    from data_lib import get_loader


    def fit(model, loader, epochs):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(epochs):
            for x, y in loader:
                opt.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                opt.step()


    def main():
        model = torch.nn.Linear(4, 1)
        fit(model, get_loader("train"), 3)
    """
    result = convert(source)
    assert "def fit(model, loader, epochs):\n    loader = ddpify.shard(loader)\n" in result.output, result.output
    assert "        ddpify.set_epoch(loader, epoch)\n" in result.output
    assert any(
        c.line == 6 and c.what.startswith("loader is a parameter of fit(), given what get_loader() (another file) returns")
        for c in result.changes
    )
    assert convert_source(result.output).output == result.output


def test_a_save_helper_stays_on_every_rank_without_an_item():
    """Following "call it under `if ddpify.is_main_process():`" would hang in ddpify.save's
    barrier: the report says why the call stays, and asks nothing."""
    result = convert("""\
        import shutil
        import torch

        def save_checkpoint(state, is_best, filename="checkpoint.pt"):
            torch.save(state, filename)
            if is_best:
                shutil.copyfile(filename, "best.pt")

        model = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(2):
            model(torch.randn(4, 2)).sum().backward()
            optimizer.step()
            save_checkpoint({"model": model.state_dict()}, epoch == 1)
    """)
    assert not [m for m in result.manual if "save_checkpoint" in m.why], result.manual
    assert any(c.what.startswith("save_checkpoint() saves with torch.save and writes output: the call stays on every rank") for c in result.changes)
    assert "if ddpify.is_main_process():\n        save_checkpoint(" not in result.output


def test_a_writing_function_that_trains_through_another_is_no_output_helper():
    """main() writes a file and trains through train(): it is the training, not an output helper."""
    result = convert("""\
        import torch

        def train(model, optimizer):
            for step in range(3):
                model(torch.randn(4, 2)).sum().backward()
                optimizer.step()

        def main():
            model = torch.nn.Linear(2, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            train(model, optimizer)
            torch.save(model.state_dict(), "model.pt")
            with open("done.txt", "w") as f:
                f.write("ok")

        main()
    """)
    assert not [m for m in result.manual if "main()" in m.why], result.manual
    assert "if ddpify.is_main_process():\n    main()" not in result.output


def test_a_gradient_penalty_whose_output_cannot_be_named_is_reported():
    result = convert("""\
        import torch
        from torch import autograd

        D = torch.nn.Linear(4, 1)
        optimizer = torch.optim.SGD(D.parameters(), lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4, requires_grad=True)
            grad = autograd.grad(outputs=D(x).sum(), inputs=x, create_graph=True)[0]
            (grad.norm() - 1).pow(2).backward()
            optimizer.step()
    """)
    assert "0.0 *" not in result.output
    items = [m for m in result.manual if "create_graph=True" in m.why]
    assert len(items) == 1 and items[0].line == 8
    assert items[0].todo.startswith("keep the output in a name (out = D(x).sum()) and add 0.0 * out.sum() to the penalty before its backward()")


def test_a_gradient_penalty_on_one_element_of_the_forward_is_rewritten():
    """``out, _ = self.D(x)``: the discriminator returns a tuple (attention maps), the penalty
    differentiates its first element."""
    result = convert("""\
        import torch
        from torch import autograd

        class Critic(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(4, 1)

            def forward(self, x):
                return self.fc(x), x

        D = Critic()
        optimizer = torch.optim.SGD(D.parameters(), lr=0.1)
        for step in range(3):
            x = torch.randn(8, 4, requires_grad=True)
            out, _ = D(x)
            grad = autograd.grad(outputs=out, inputs=x, grad_outputs=torch.ones(out.size()), create_graph=True)[0]
            penalty = ((grad.norm(2, dim=1) - 1) ** 2).mean()
            penalty.backward()
            optimizer.step()
    """)
    assert "(penalty + 0.0 * out.sum()).backward()" in result.output
    assert not [m for m in result.manual if "create_graph" in m.why]


@pytest.mark.parametrize(
    ("loss", "zero_term"),
    [
        # unseen20r's ct-gan: the penalty and both plain critic forwards in one loss
        ("D(fake).mean() - D(real).mean() + 10 * gp", False),
        # the plain forwards through a name bound before
        ("wgan + 10 * gp", False),
        # the penalty alone, though a plain forward ran earlier for another loss
        ("10 * gp", True),
    ],
)
def test_a_penalty_in_one_loss_with_plain_forwards_needs_no_zero_term(loss: str, zero_term: bool) -> None:
    """A plain forward of the critic in the same backward reaches every parameter already: the
    ``0.0 * out.sum()`` term (and its change line) is only for a penalty's own backward."""
    result = convert(f"""\
        import torch
        from torch import autograd

        D = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
        optimizer = torch.optim.SGD(D.parameters(), lr=0.1)
        for step in range(3):
            real, fake = torch.randn(8, 4), torch.randn(8, 4)
            logged = D(real).mean().item()
            wgan = D(fake).mean() - D(real).mean()
            x = torch.randn(8, 4, requires_grad=True)
            out = D(x)
            grad = autograd.grad(outputs=out, inputs=x, grad_outputs=torch.ones_like(out), create_graph=True)[0]
            gp = ((grad.norm(2, dim=1) - 1) ** 2).mean()
            d_loss = {loss}
            optimizer.zero_grad()
            d_loss.backward()
            optimizer.step()
    """)
    assert ("(d_loss + 0.0 * out.sum()).backward()" in result.output) is zero_term, result.output
    assert not [m for m in result.manual if "create_graph" in m.why]
