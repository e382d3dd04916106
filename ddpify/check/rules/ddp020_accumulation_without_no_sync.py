from __future__ import annotations

import functools

import libcst as cst
from libcst.metadata import PositionProvider

from ddpify.check.accumulation import (
    accumulation_named,
    is_optimizer_step,
    iterates_models,
    only_continues,
    rebound_in,
    synced,
    wraps_in_project,
)
from ddpify.check.calls import every_call, nodes
from ddpify.check.rule import Invalid, Rule
from ddpify.check.wraps import is_ddp_wrap
from ddpify.convert import names, rewrites
from ddpify.tree.cstutil import code, has_binary_operator, is_method_call, of_types

# Ways to skip the all-reduce of non-final micro-steps: DDP's own, ddpify's
# `with ddpify.sync_gradients(model, when=...)`, Accelerate's `accelerator.accumulate(model)`.
_SYNC_CONTROL = frozenset({"no_sync", "require_backward_grad_sync", "sync_gradients", "accumulate"})


class AccumulationWithoutNoSync(Rule):
    code = "DDP020"
    name = "accumulation-without-no-sync"
    message = "gradient accumulation without no_sync(): every micro-step's backward all-reduces the gradients"
    severity = "warning"
    fix = "safe"
    why = (
        "Under DDP, each `backward()` launches the gradient all-reduce. With gradient accumulation "
        "(`optimizer.step()` only every k-th iteration, under `if (i + 1) % k == 0`) the k-1 "
        "intermediate all-reduces are wasted communication: the result is the same, the step is up to "
        "k times slower on the network (pytorch/pytorch#43201). Run the forward and backward of the "
        "non-final micro-steps inside `with model.no_sync():` — both of them: a `no_sync` around the "
        "backward alone does not help (baidu-baige/LoongForge#163). Reported where an optimizer's "
        "`step()` sits under an `if` whose test uses `%`, or reads a name made for accumulation "
        "(`gradient_accumulation_steps`, `gradient_interval`, `update_freq`), inside a loop that calls "
        "`backward()` every iteration (and none under the `if`, where every optimizer of the loop steps: a "
        "GAN's `n_critic` schedule is no accumulation), or in a method that does (`run_step(batch)`, called "
        "once per batch) under such a named test; where a loop's `if step % k != 0: continue` after the "
        "backward skips the step; in a script that wraps a model in DDP (itself, or through a helper of its project "
        "that does: `create_ddp_model(model)`) and never mentions `no_sync` (nor "
        "`ddpify.sync_gradients`, which the converter inserts, nor Accelerate's `accumulate`); where a loss "
        "scaler does the backward and steps only every k-th call (`loss_scaler(loss, optimizer, "
        "update_grad=(idx + 1) % k == 0)`, the timm/Swin `NativeScaler`); and where an inner loop over "
        "micro-batches (chunks of the batch, a slimmable network's widths) calls `backward()` on every "
        "iteration and the optimizer steps once after it (not a loop over models, one backward each, nor "
        "one that steps inside). A module with no DDP wrap of its own counts when a project file that imports "
        "it wraps a model (a trainer's `train(net, ...)` handed the wrapper)."
    )
    default = True
    fix_notes = (
        'The fix runs the loop body under `with model.no_sync() if hasattr(model, "no_sync") and not '
        "(<the step test>) else contextlib.nullcontext():` (the converter's `ddpify.sync_gradients` in a "
        "script that uses ddpify.runtime): `no_sync()` on the micro-batches that do not step, the same "
        "gradients, one all-reduce per step, and a plain model (single process) runs as before. It is "
        "offered where the converter can plan it (a `for` loop, one trained model) and the step test "
        "reads no name the loop body rebinds (`step += 1` would make the test stale); the loss-scaler "
        "form gets no fix."
    )
    false_positives = (
        "A loop whose accumulation is handled inside a helper of another module; a trainer module that a DDP "
        "script imports, run only by a single-process script of the project."
    )
    valid = (
        """\
import contextlib
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[rank])
for i, (x, y) in enumerate(loader):
    last = (i + 1) % accumulation_steps == 0
    with contextlib.nullcontext() if last else model.no_sync():
        loss = criterion(model(x), y) / accumulation_steps
        loss.backward()
    if last:
        optimizer.step()
        optimizer.zero_grad()
""",
        """\
import ddpify.runtime as ddpify

model = ddpify.prepare_model(model)
for i, (x, y) in enumerate(loader):
    with ddpify.sync_gradients(model, when=(i + 1) % accumulation_steps == 0):
        loss = criterion(model(x), y) / accumulation_steps
        loss.backward()
    if (i + 1) % accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
        """\
import ddpify.runtime as ddpify

model = ddpify.prepare_model(model)
for i, (x, y) in enumerate(loader):
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
    if i % 100 == 0:
        scheduler.step()
""",
        """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

generator, critic = DDP(generator), DDP(critic)
for i, (real,) in enumerate(loader):
    optimizer_c.zero_grad()
    (critic(generator(z).detach()).mean() - critic(real).mean()).backward()
    optimizer_c.step()
    if i % n_critic == 0:  # a schedule: the generator's own backward and step
        optimizer_g.zero_grad()
        (-critic(generator(z)).mean()).backward()
        optimizer_g.step()
""",
        """\
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model)
for step, (x, y) in enumerate(loader):
    criterion(model(x), y).backward()
    if step % log_every != 0:  # logging skipped, not the step
        continue
    print(step)
""",
        """\
import contextlib
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model)
for x, y in loader:
    chunks = list(zip(x.chunk(4), y.chunk(4)))
    for index, (xc, yc) in enumerate(chunks):
        with model.no_sync() if index < len(chunks) - 1 else contextlib.nullcontext():
            criterion(model(xc), yc).backward()
    optimizer.step()
    optimizer.zero_grad()
""",
        """\
from torch.nn.parallel import DistributedDataParallel as DDP

generator, critic = DDP(generator), DDP(critic)
for real, _ in loader:
    for _ in range(n_critic):  # each critic iteration steps
        critic_loss(critic, generator, real).backward()
        optimizer_c.step()
        optimizer_c.zero_grad()
    generator_loss(critic, generator).backward()
    optimizer_g.step()
""",
        """\
from torch.nn.parallel import DistributedDataParallel as DDP

nets = [DDP(net) for net in nets]
for x, y in loader:
    for net in nets:  # one backward per model
        criterion(net(x), y).backward()
    optimizer.step()
""",
    )
    invalid = (
        Invalid(
            """\
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model)
for x, y in loader:
    optimizer.zero_grad()
    for xc, yc in zip(x.chunk(subdivision), y.chunk(subdivision)):  # micro-batches of one step
        criterion(model(xc), yc).backward()
    optimizer.step()
"""
        ),
        Invalid(
            """\
import torch

model = torch.nn.parallel.DistributedDataParallel(model)
for x, y in loader:
    for width in sorted(widths, reverse=True):  # a slimmable network's sandwich rule
        model.apply(lambda m: setattr(m, "width_mult", width))
        loss = criterion(model(x), y)
        loss.backward()
    optimizer.step()
"""
        ),
        Invalid(
            """\
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model)
for step, (x, y) in enumerate(loader, 1):
    (criterion(model(x), y) / accumulation).backward()
    if step % accumulation != 0:
        continue
    optimizer.step()
    optimizer.zero_grad()
"""
        ),
        Invalid(
            """\
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model, optimizer, cfg):
        self.model = DDP(model)
        self.optimizer = optimizer
        self.cfg = cfg
        self.micro_steps = 0

    def run_step(self, batch):
        loss = self.model(batch) / self.cfg.gradient_accumulation_steps
        loss.backward()
        self.micro_steps += 1
        if self.micro_steps >= self.cfg.gradient_accumulation_steps:
            self.optimizer.step()
            self.optimizer.zero_grad()
            self.micro_steps = 0
"""
        ),
        Invalid(
            """\
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model)
for batch_id, (x, y) in enumerate(loader):
    (criterion(model(x), y) / gradient_interval).backward()
    if batch_id - start_id + 1 == gradient_interval:
        optimizer.step()
        optimizer.zero_grad()
        start_id = batch_id + 1
"""
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model = DDP(model, device_ids=[rank])
for i, (x, y) in enumerate(loader):
    loss = criterion(model(x), y) / accumulation_steps
    loss.backward()
    if (i + 1) % accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
""",
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
import contextlib

optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model = DDP(model, device_ids=[rank])
for i, (x, y) in enumerate(loader):
    with model.no_sync() if hasattr(model, "no_sync") and not ((i + 1) % accumulation_steps == 0) else contextlib.nullcontext():
        loss = criterion(model(x), y) / accumulation_steps
        loss.backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model = DDP(model, device_ids=[rank])
step = 0
for x, y in loader:
    criterion(model(x), y).backward()
    step += 1
    if step % accumulation_steps == 0:  # decided by a value the body computes: no automatic fix
        optimizer.step()
        optimizer.zero_grad()
"""
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist

model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
for idx, (samples, targets) in enumerate(data_loader):
    loss = criterion(model(samples), targets) / accumulation_steps
    grad_norm = loss_scaler(loss, optimizer, parameters=model.parameters(), update_grad=(idx + 1) % accumulation_steps == 0)
    if (idx + 1) % accumulation_steps == 0:
        optimizer.zero_grad()
"""
        ),
    )

    def visit_Module(self, node: cst.Module) -> None:
        if self._mentions_no_sync(node):
            return
        self._pending: list[tuple[tuple[object, ...], dict[str, object]]] = []
        self._accumulations(node)
        source = self.file.analysis.source
        if self._pending and (
            any(is_ddp_wrap(self, call) or wraps_in_project(source, call) for call in every_call(node)) or source.project.wrapped_elsewhere
        ):  # a DDP model here, or in the project files that import this one (asked only of a file that accumulates)
            for args, keywords in self._pending:
                self.report(*args, **keywords)  # type: ignore[arg-type]

    def _offer(self, *args: object, **keywords: object) -> None:
        self._pending.append((args, keywords))

    def _accumulations(self, node: cst.Module) -> None:
        optimizers = self._optimizers(node)
        reported: set[cst.If] = set()
        fixed: set[cst.For] = set()
        for call in every_call(node):
            if not is_optimizer_step(call, optimizers):
                continue
            boundary = self._modulo_if(call)
            if boundary is None:
                self._skipped_steps(call, reported)
                continue
            if boundary in reported:
                continue
            loop = self._loop_of(boundary) or (self._enclosing_function(boundary) if accumulation_named(boundary.test) else None)
            if loop is not None and self._backward_outside(loop, boundary) and self._only_gated_steps(loop, boundary, optimizers):
                reported.add(boundary)
                message = (
                    f"gradient accumulation (`{code(call)}` only when `{code(boundary.test)}`) without no_sync(): the "
                    "backward of every micro-step all-reduces gradients; run the non-final micro-steps' forward and "
                    "backward in `with model.no_sync():`"
                )
                # the converter's own plan for this loop: which model, which test decides the step
                plan = self.file.facts.accumulation.get(loop) if isinstance(loop, cst.For) else None
                if plan is not None and isinstance(loop, cst.For) and rebound_in(loop, boundary.test):
                    plan = None  # `when=` is evaluated before the body changes what the test reads
                if plan is None:
                    self._offer(boundary, message)
                elif isinstance(loop, cst.For) and loop not in fixed:  # a plan is only made for a For
                    fixed.add(loop)
                    if self.file.already_converted:
                        self._offer(loop, message, replacement=functools.partial(rewrites.synced_accumulation, loop, *plan))
                    else:
                        self._offer(
                            loop,
                            message,
                            replacement=functools.partial(synced, loop, *plan),
                            imports=(("contextlib", None),),
                        )
        self._scaler_accumulation(node)
        self._micro_batch_loops(node, optimizers)

    def _micro_batch_loops(self, module: cst.Module, optimizers: set[str]) -> None:
        """An inner loop over micro-batches (chunks of the batch, a slimmable network's widths)
        whose every iteration calls ``backward()`` and none steps, followed in the same training
        step by the optimizer's ``step()``: each micro-batch's backward all-reduces."""
        homes: dict[cst.CSTNode, list[cst.Call]] = {}  # each call under its loop or function, in one pass
        stepping: set[cst.CSTNode] = set()  # the loops with a step or zero_grad anywhere inside
        for call in every_call(module):
            home = self._loop_of(call) or self._enclosing_function(call)
            homes.setdefault(home, []).append(call)  # type: ignore[arg-type]
            if is_optimizer_step(call, optimizers) or is_method_call(call, "zero_grad"):
                stepping.update(a for a in self.ancestors(call) if isinstance(a, (cst.For, cst.While)))
        for loop, calls in homes.items():
            backwards = [c for c in calls if is_method_call(c, "backward")]
            if not isinstance(loop, (cst.For, cst.While)) or not backwards or loop in stepping:
                continue
            if any(self._modulo_if(c) is not None for c in backwards) or iterates_models(loop):
                continue  # a backward some iterations skip; one backward per model (``for net in nets:``)
            scope = self._loop_of(loop) or self._enclosing_function(loop)
            end = self._line(loop, end=True)
            after = homes.get(scope, []) if scope is not None else []
            step = next((c for c in after if self._line(c) > end and is_optimizer_step(c, optimizers)), None)
            if step is None:
                continue
            self._offer(
                backwards[0],
                f"micro-batches in a loop, each with its own `{code(backwards[0].func)}()`, before one `{code(step)}` "
                "without no_sync(): every micro-batch's backward all-reduces gradients; run all but the last in "
                "`with model.no_sync():`",
            )

    def _scaler_accumulation(self, module: cst.Module) -> None:
        """``loss_scaler(loss, optimizer, update_grad=(i + 1) % k == 0)`` in a loop: the scaler
        does the backward on every call and the step on every k-th."""
        for call in self.file.analysis.source.of_types(cst.Call):
            assert isinstance(call, cst.Call)
            update = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "update_grad"), None)
            if update is None or not has_binary_operator(update, cst.Modulo) or self._loop_of(call) is None:
                continue
            self._offer(
                call,
                f"gradient accumulation through `{code(call.func)}(..., update_grad={code(update)})` without no_sync(): "
                "the backward of every micro-step all-reduces gradients; run the non-final micro-steps in "
                "`with model.no_sync():`",
            )

    def _mentions_no_sync(self, module: cst.Module) -> bool:
        return any(n.value in _SYNC_CONTROL for n in nodes(module, cst.Name))

    def _optimizers(self, module: cst.Module) -> set[str]:
        found: set[str] = set()
        for assign in nodes(module, cst.Assign):
            if isinstance(assign.value, cst.Call) and names.is_optimizer(self.qualified(assign.value)):
                found.update(code(t.target) for t in assign.targets)
        return found

    def _modulo_if(self, node: cst.CSTNode) -> cst.If | None:
        """The ``if`` around the step that decides it: a test with ``%``, or one named for
        accumulation (``_ACCUMULATION``)."""
        child = node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.For, cst.While, cst.FunctionDef)):
                return None
            if isinstance(ancestor, cst.If) and child is not ancestor.test:
                if has_binary_operator(ancestor.test, cst.Modulo) or accumulation_named(ancestor.test):
                    return ancestor
            child = ancestor
        return None

    def _skipped_steps(self, step: cst.Call, reported: set[cst.If]) -> None:
        """``loss.backward()`` then ``if global_step % k != 0: continue`` before the step: the
        micro-steps skip the step, and their backward still all-reduces."""
        loop = self._loop_of(step)
        if loop is None:
            return
        statements = list(loop.body.body) if isinstance(loop.body, cst.IndentedBlock) else []
        for index, statement in enumerate(statements):
            if step in set(of_types(statement, cst.Call)):
                break
            if not (isinstance(statement, cst.If) and only_continues(statement)):
                continue
            test = statement.test
            earlier = [c for s in statements[:index] for c in of_types(s, cst.Call)]
            skips = has_binary_operator(test, cst.Modulo) or accumulation_named(test)
            if skips and statement not in reported and any(is_method_call(c, "backward") for c in earlier):
                reported.add(statement)
                self._offer(
                    statement,
                    f"gradient accumulation (`{code(step)}` skipped while `{code(test)}`) without no_sync(): the backward "
                    "of every micro-step all-reduces gradients; run the non-final micro-steps' forward and backward in "
                    "`with model.no_sync():`",
                )
            return

    def _line(self, node: cst.CSTNode, end: bool = False) -> int:
        where = self.get_metadata(PositionProvider, node)
        return where.end.line if end else where.start.line

    def _enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return next((a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None)

    def _loop_of(self, node: cst.CSTNode) -> cst.For | cst.While | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.For, cst.While)):
                return ancestor
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return None
        return None

    def _only_gated_steps(self, loop: cst.For | cst.While | cst.FunctionDef, boundary: cst.If, optimizers: set[str]) -> bool:
        """Accumulation, not a schedule: no backward under the gate, and no optimizer of the
        loop's own body stepping outside it (a GAN's ``if i % n_critic == 0:`` generator step,
        with its own backward, while the critic steps every iteration, is no accumulation)."""
        inner = {c for nested in of_types(loop.body, cst.For, cst.While) for c in of_types(nested, cst.Call)}
        gated = set(of_types(boundary, cst.Call))
        own = [c for c in of_types(loop.body, cst.Call) if c not in inner]
        if any(is_method_call(c, "backward") for c in own if c in gated):
            return False
        outside = [c for c in own if c not in gated and is_optimizer_step(c, optimizers)]
        return all(self._exclusive(c, boundary) for c in outside)

    def _exclusive(self, node: cst.CSTNode, gate: cst.If) -> bool:
        """In the other branch of an ``if`` around both (``if k > 1: <accumulate> else: <step every time>``)."""
        mine = set(self.ancestors(node))
        for branch in self.ancestors(gate):
            if isinstance(branch, cst.If) and branch in mine:
                return (branch.body in mine) != (branch.body in set(self.ancestors(gate)))
        return False

    def _backward_outside(self, loop: cst.For | cst.While | cst.FunctionDef, boundary: cst.If) -> bool:
        for call in of_types(loop.body, cst.Call):
            if is_method_call(call, "backward") and boundary not in set(self.ancestors(call)):
                return True
        return False
