from __future__ import annotations

import functools
from collections.abc import Sequence

import libcst as cst

from ddpify.analysis.batch_calls import loader_inner
from ddpify.analysis.samplers import SAMPLERS, Samplers
from ddpify.check.rule import Invalid, Rule
from ddpify.convert import names
from ddpify.tree.cstutil import code, is_method_call, is_name, is_simple_reference, of_types


class MissingSetEpoch(Rule):
    code = "DDP001"
    name = "missing-set-epoch"
    message = "epoch loop never calls set_epoch on its DistributedSampler: every epoch repeats the same order"
    severity = "error"
    why = (
        "DistributedSampler shuffles with a seed derived from its epoch. Without "
        "`sampler.set_epoch(epoch)` before each epoch, every "
        "epoch replays the permutation of epoch 0, which quietly hurts convergence "
        "(pytorch/pytorch#31771). Call it at the top of the epoch loop, for the loader the loop "
        "iterates (directly, through `enumerate`/`tqdm`, or through a function of this file it hands "
        "the loader to). An epoch loop is `for epoch in ...` or a `range(...)` whose bound counts "
        "epochs (`for t in range(args.epochs)`). Also reported: a `while` loop that starts pass "
        "after pass over such a loader (`def sample_data(loader): while True: for batch in loader: "
        "yield batch`, the loader by name or handed in by every call) with no set_epoch inside: "
        "the sampler's epoch never changes. A loader's sampler is a DistributedSampler also when it "
        "is one on some path (`RandomSampler(ds) if args.local_rank == -1 else DistributedSampler(ds)`), "
        "when a function of this file or of the project's modules returns one "
        "(`sampler=data_sampler(dataset, shuffle=True, distributed=args.distributed)`), and a loader "
        "is one when a function of the project's modules builds it so and returns it "
        "(`train_loader, test_loader = get_loader(args)`). A set_epoch counts for the loader it is "
        "called on (its sampler, `loader.sampler`, the loader): one called only for another loader's "
        "sampler leaves the loop's own loader repeating its order. Samplers built with "
        "`shuffle=False`, and evaluation loaders read or handed on beside a training loader (also one "
        "this file cannot see into, like a DALI iterator), need none."
    )
    default = True
    fix = "safe"
    fix_notes = (
        "The fix inserts the call at the top of the loop, in plain PyTorch, for the sampler the "
        "loader was built with: `train_sampler.set_epoch(epoch)`; `if train_sampler is not None:` "
        "around it when the sampler is None in a single-process run; `loader.sampler.set_epoch(epoch)` "
        'for a sampler built in the DataLoader call; `if hasattr(loader.sampler, "set_epoch"):` when '
        "the loader is built without one on some path. A single-process run does what it did. "
        "The endless `while` loop gets no fix: it needs a pass counter of its own."
    )
    false_positives = "An epoch loop whose set_epoch call is in a function of another module."
    valid = (
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

sampler = DistributedSampler(dataset)
loader = DataLoader(dataset, batch_size=8, sampler=sampler)
for epoch in range(10):
    sampler.set_epoch(epoch)
    for batch in loader:
        step(batch)
""",
        """\
import ddpify.runtime as ddpify

loader = ddpify.distributed_loader(dataset, batch_size=8, shuffle=True)
for epoch in range(10):  # the runtime's loader advances its own epoch
    for batch in loader:
        step(batch)
""",
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

train_sampler = DistributedSampler(train_set)
train_loader = DataLoader(train_set, batch_size=8, sampler=train_sampler)


def train(epoch):
    train_sampler.set_epoch(epoch)  # in the function the epoch loop calls
    for batch in train_loader:
        step(batch)


for epoch in range(10):
    train(epoch)
""",
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

train_loader = DataLoader(train_set, batch_size=8, sampler=DistributedSampler(train_set))
val_loader = DataLoader(val_set, batch_size=8)
for epoch in range(3):  # a second phase on the unsharded loader only
    for batch in val_loader:
        step(batch)
""",
        """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

from data import get_train_loader

train_loader = get_train_loader(args)  # a DALI iterator: sharded by its pipeline
val_loader = DataLoader(val_set, batch_size=8, sampler=DistributedSampler(val_set))
for epoch in range(args.epochs):  # the evaluation loader's order changes no result
    train_loop(model, optimizer, train_loader, val_loader, epoch)
""",
        """\
import math

import torch
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(train_set, batch_size=8, sampler=DistributedSampler(train_set))
lr_dict = {}
for i in range(args.num_epochs):  # a schedule table: no pass over the data
    lr_dict[i] = (1.0 + math.cos(math.pi * i / args.num_epochs)) / 2.0
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda epoch: lr_dict[epoch])
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))
for epoch in range(10):
    for batch in loader:
        step(batch)
""",
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(dataset, batch_size=8, sampler=DistributedSampler(dataset))
for epoch in range(10):
    loader.sampler.set_epoch(epoch)
    for batch in loader:
        step(batch)
""",
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(dataset, sampler=DistributedSampler(dataset))
for t in range(args.epochs):  # the range bound counts epochs, whatever the variable's name
    for batch in loader:
        step(batch)
""",
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(dataset, sampler=DistributedSampler(dataset))
for t in range(args.epochs):  # the range bound counts epochs, whatever the variable's name
    loader.sampler.set_epoch(t)
    for batch in loader:
        step(batch)
""",
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(probe_set, sampler=DistributedSampler(probe_set))
train_loader = DataLoader(train_set, sampler=DistributedSampler(train_set))


def train_one_epoch(model, data):
    for x, y in data:
        step(model, x, y)


for epoch in range(10):
    train_one_epoch(model, train_loader)
""",
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

loader = DataLoader(probe_set, sampler=DistributedSampler(probe_set))
train_loader = DataLoader(train_set, sampler=DistributedSampler(train_set))


def train_one_epoch(model, data):
    for x, y in data:
        step(model, x, y)


for epoch in range(10):
    train_loader.sampler.set_epoch(epoch)
    train_one_epoch(model, train_loader)
""",
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

train_sampler = None
if args.distributed:
    train_sampler = DistributedSampler(train_set)
train_loader = DataLoader(train_set, batch_size=8, shuffle=(train_sampler is None), sampler=train_sampler)
for epoch in range(args.epochs):
    for batch in train_loader:
        step(batch)
""",
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

train_sampler = None
if args.distributed:
    train_sampler = DistributedSampler(train_set)
train_loader = DataLoader(train_set, batch_size=8, shuffle=(train_sampler is None), sampler=train_sampler)
for epoch in range(args.epochs):
    if train_sampler is not None:
        train_sampler.set_epoch(epoch)
    for batch in train_loader:
        step(batch)
""",
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

if opt["dist"]:
    train_sampler = DistributedSampler(train_set, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=8, sampler=train_sampler)
else:
    train_loader = DataLoader(train_set, batch_size=8, shuffle=True)
for epoch in range(1000000):
    for batch in train_loader:
        step(batch)
""",
            """\
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

if opt["dist"]:
    train_sampler = DistributedSampler(train_set, shuffle=True)
    train_loader = DataLoader(train_set, batch_size=8, sampler=train_sampler)
else:
    train_loader = DataLoader(train_set, batch_size=8, shuffle=True)
for epoch in range(1000000):
    for epoch_sampler in (train_loader.sampler, getattr(train_loader.batch_sampler, "sampler", None)):
        if hasattr(epoch_sampler, "set_epoch"):
            epoch_sampler.set_epoch(epoch)
    for batch in train_loader:
        step(batch)
""",
        ),
    )

    @functools.cached_property
    def _samplers(self) -> Samplers:
        return self.file.analysis.samplers

    @property
    def _loaders(self) -> dict[str, cst.BaseExpression | None]:
        return self._samplers.loaders

    def _set_epoch(self, loader: str, epoch: str) -> str:
        """The plain set_epoch statement for ``loader``'s sampler, guarded where the sampler may
        be missing (None, or a loader built without one) in a single-process run."""
        sampler = self._loaders.get(loader)
        plain = loader in self._samplers.plain
        if sampler is not None and is_simple_reference(sampler):
            name = code(sampler)
            values = [(s, v) for s, v in self.file.analysis.source.assignments.get(name, [])]
            if values and all(isinstance(v, cst.Call) and self.qualified(v) & SAMPLERS for _, v in values):
                if not any(self._conditional(s) for s, _ in values) and not plain:
                    return f"{name}.set_epoch({epoch})"
            elif values and all(isinstance(v, cst.Call) and self.qualified(v) & SAMPLERS or is_name(v, "None") for _, v in values):
                return f"if {name} is not None:\n    {name}.set_epoch({epoch})"
        elif isinstance(sampler, cst.Call) and self.qualified(sampler) & SAMPLERS and not plain:
            return f"{loader}.sampler.set_epoch({epoch})"
        # unknown here (a helper's loader): its sampler=, or the one inside its batch_sampler=
        samplers = f'({loader}.sampler, getattr({loader}.batch_sampler, "sampler", None))'
        return f'for epoch_sampler in {samplers}:\n    if hasattr(epoch_sampler, "set_epoch"):\n        epoch_sampler.set_epoch({epoch})'

    def _conditional(self, statement: cst.CSTNode) -> bool:
        """Under an ``if`` (or ``try``) of its function: the name may be unbound on some path."""
        for ancestor in self.ancestors(statement):
            if isinstance(ancestor, (cst.FunctionDef, cst.Module)):
                return False
            if isinstance(ancestor, (cst.If, cst.Try, cst.With, cst.For, cst.While)):
                return True
        return False

    def _ordered(self, loaders: list[str], read: list[str]) -> list[str]:
        """The loaders whose order matters: their sampler shuffles, and evaluation loaders
        (``val_loader``) only when the loop reads no other: which rank evaluates which
        sample in which order changes no result. ``read``: everything the loop iterates or
        hands out; a training loader among it that this file cannot see into (a DALI
        iterator from ``get_train_loader``) is the other loader too."""
        shuffled = [key for key in loaders if self._samplers.shuffles(key)]
        training = [key for key in shuffled if not names.EVAL_LOADER.search(key) or names.TRAIN_LOADER.search(key)]
        if not training and any(names.TRAIN_LOADER.search(key) and not names.EVAL_LOADER.search(key) for key in read):
            return []
        return training or shuffled

    def _receivers(self, bodies: Sequence[cst.CSTNode]) -> list[str]:
        """What the ``set_epoch`` calls in ``bodies`` are called on (``train_sampler``)."""
        return [
            code(call.func.value)
            for body in bodies
            for call in of_types(body, cst.Call)
            if isinstance(call, cst.Call) and is_method_call(call, "set_epoch") and isinstance(call.func, cst.Attribute)
        ]

    def _uncovered(self, loaders: list[str], bodies: Sequence[cst.CSTNode]) -> list[str]:
        """The ``loaders`` no ``set_epoch`` call in ``bodies`` advances. A call on a receiver
        this file does not know as another loader's sampler (a parameter, a custom loader)
        counts for every loader: only a set_epoch provably meant for another loader leaves
        one out (``self.hr_sampler.set_epoch(e)`` in a loop over ``self.lr_loader``)."""
        receivers = set(self._receivers(bodies))
        known = {*self._samplers.samplers, *self._loaders, *(f"{key}.sampler" for key in self._loaders)}
        if receivers - known:
            return []
        return [key for key in loaders if not self._names_of(key) & receivers]

    def _names_of(self, loader: str) -> set[str]:
        """The receivers a set_epoch for ``loader`` may be called on."""
        sampler = self._loaders.get(loader)
        names = {loader, f"{loader}.sampler"}
        return names | {code(sampler)} if sampler is not None and is_simple_reference(sampler) else names

    def leave_While(self, original_node: cst.While) -> None:
        """``while True: for batch in loader: yield batch``: each pass over a sharded loader
        restarts its sampler, and with no set_epoch in the loop every pass has the same order."""
        for inner in of_types(original_node.body, cst.For):
            assert isinstance(inner, cst.For)
            sharded = self._iterates_sharded(inner)
            if sharded is not None and self._uncovered([sharded], [original_node.body]):
                self.report(
                    original_node,
                    f"loop starts pass after pass over {sharded} (a DistributedSampler loader) and never calls "
                    "set_epoch: every pass repeats the same order; count the passes and call sampler.set_epoch(n) before each",
                )
                return

    def _iterates_sharded(self, loop: cst.For) -> str | None:
        """The sharded loader the loop reads: by name (also through ``enumerate``/``tqdm`` and
        a name bound to one of those), or as a parameter of its function that every call of
        the function in this file is handed one."""
        loops = self.file.analysis.loops
        iterated = loops.iterated(loop)
        found = next((key for key in iterated if key in self._loaders), None)
        if found is not None or len(iterated) != 1:
            return found or self._made_sharded(loop)
        source = self.file.analysis.source
        function = source.enclosing_function(loop)
        names = [p.name.value for p in function.params.params] if function is not None else []
        if iterated[0] not in names or function is None:
            return self._made_sharded(loop)
        index = names.index(iterated[0])
        sites = source.call_sites(function)
        passed = [
            a.value for site in sites for i, a in enumerate(site.args) if (a.keyword.value == iterated[0] if a.keyword else i == index)
        ]
        if passed and len(passed) == len(sites) and all(code(v) in self._loaders for v in passed):
            return iterated[0]
        return self._made_sharded(loop)

    def _made_sharded(self, loop: cst.For) -> str | None:
        """The loop's iterable (``self.dataset``) when some value it may hold was made as a
        sharded loader, followed through parameters and ``self.`` attributes (diffwave's learner
        handed ``from_path(..., is_distributed=True)``)."""
        dataflow = self.file.analysis.dataflow
        origins = dataflow.values.origins(loop.iter, inner=loader_inner)
        if any(o.known and self._samplers.made_sharded(o.node, o.slot) for o in origins):
            inner = loop.iter
            while True:  # `tqdm(self.dataset) if self.is_master else self.dataset`: the loader itself
                unwrapped = inner.orelse if isinstance(inner, cst.IfExp) else loader_inner(self.file.analysis.source, inner)
                if unwrapped is None:
                    break
                inner = unwrapped
            return code(inner)
        return None

    def _computes_only(self, loop: cst.For) -> bool:
        """The loop only computes numbers: every call in it is a builtin or ``math``'s (no
        loader, no training step, no function that could run one)."""
        return all(_pure(self.qualified(call)) for call in of_types(loop.body, cst.Call))

    def leave_For(self, original_node: cst.For) -> None:
        loops = self.file.analysis.loops
        if not self._loaders and not self._samplers.samplers or not loops.is_epoch_loop(original_node):
            return
        if not self.file.analysis.context.ranks(original_node).may:
            return  # dead code: a function of a script nobody imports that nothing calls
        bodies = [original_node.body, *(f.body for f in loops.called_functions(original_node))]
        iterated = loops.iterated(original_node)
        handed = loops.handed_out(original_node)
        chosen = [key for key in iterated if key in self._loaders] or [key for key in handed if key in self._loaders]
        chosen = self._ordered(chosen, [*iterated, *handed])
        if not chosen and any(key in self._loaders for key in [*iterated, *handed]):
            return  # only evaluation loaders beside a training loader: their order changes nothing
        if not chosen and any(key in self._samplers.plain for key in iterated):
            return  # it iterates a loader without a DistributedSampler
        if not chosen and self._receivers(bodies):
            return  # a set_epoch here, and which loader the loop reads is not visible
        if not chosen and not iterated and not handed and self._computes_only(original_node):
            return  # `for i in range(epochs): lr_dict[i] = ...`: a schedule table, no pass over data
        uncovered = self._uncovered(chosen, bodies)
        if chosen and not uncovered:
            return  # here, or in a function of this file the loop calls (train(epoch))
        if uncovered and isinstance(original_node.body, cst.IndentedBlock):
            target = original_node.target  # `for epoch, seed in enumerate(...)`: the count
            epoch = target.elements[0].value if isinstance(target, cst.Tuple) else target
            calls = [self._set_epoch(key, code(epoch)) for key in uncovered]
            self.report(original_node, replacement=functools.partial(_with_first, original_node, calls))
        else:
            self.report(original_node)  # which loader it reads is not visible here


_PURE_MODULES = ("math.", "builtins.")


def _pure(qualified: set[str]) -> bool:
    return bool(qualified) and all(q.startswith(_PURE_MODULES) for q in qualified)


def _with_first(loop: cst.For, statements: list[str]) -> cst.For:
    """``loop`` with ``statements`` at the top of its body."""
    assert isinstance(loop.body, cst.IndentedBlock)
    parsed = [cst.parse_statement(text + "\n") for text in statements]
    return loop.with_changes(body=loop.body.with_changes(body=[*parsed, *loop.body.body]))
