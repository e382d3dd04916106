from __future__ import annotations

import libcst as cst

from ddpify.analysis.collectives import opt_in_collective
from ddpify.analysis.context import Process
from ddpify.analysis.ranks import DISTRIBUTED, Ranks
from ddpify.check.calls import collective, every_call
from ddpify.check.places import scope_of
from ddpify.check.rule import Invalid, Rule, short
from ddpify.check.wraps import Wrap, assignments, ddp_wraps, wrap_in_effect
from ddpify.tree.cstutil import code, is_method_call


class RankAsymmetricCollective(Rule):
    code = "DDP027"
    default = True
    name = "rank-asymmetric-collective"
    message = "collective inside a rank guard: the other ranks never reach it and the job hangs"
    severity = "error"
    why = (
        "A collective — `dist.barrier`, `all_reduce`, `all_gather`, `broadcast`, `reduce`, `gather`, "
        "`scatter`, `ddpify.save` / `ddpify.barrier` (they contain a barrier), and the forward of a "
        "DDP-wrapped model (it arms the gradient all-reduce; with `broadcast_buffers`, the default, its "
        "first forward after a training step broadcasts the buffers, under `no_grad` too) — completes only "
        "when every rank of the group calls it. Inside `if rank == 0:` rank 0 waits for peers that "
        "never come, until the NCCL timeout kills the job (discuss.pytorch.org/t/114522; "
        "talmolab/sleap-nn#437). Call collectives on every rank; in rank-0-only evaluation use the "
        "inner module (`ddpify.unwrap(model)`); let rank 0 decide and broadcast the decision. The "
        "collective may sit in a function of this file called under the rank test, or in a helper "
        "of the project's own modules that runs one on every call (`utils.reduce_mean(loss)` whose "
        "body calls `dist.all_reduce`, also through its own helpers), or only when the call passes the option "
        "it waits for (`log(msg, sync=True)` of a `def log(msg, sync=False): if sync: barrier()`, mlperf's "
        "`kwargs.pop('sync', False)`); a call without it runs none. A test that names a function without "
        "calling it (`if is_main_process:`) is always true, no rank test. The "
        "balanced idiom — the same collective under complementary guards (`if local_rank not in "
        "[-1, 0]: barrier()` … `if local_rank == 0: barrier()`) or in both branches — is not reported. "
        "A forward through the wrapper on some ranks under `no_grad` is not reported: it arms no all-reduce; "
        "with `broadcast_buffers` its first forward after a training forward broadcasts the buffers, which the "
        "other ranks' next step answers (DDP skips rank 0's next pre-forward broadcast), so only the last "
        "evaluation's broadcast is unanswered: with gloo rank 0 fails there once the others exit, with NCCL a "
        "small broadcast usually completes unanswered. Three reviews of 2 real scripts judged the hang claim "
        "wrong; evaluate through `model.module` anyway. "
        "Guards count wherever they are: around the call, as an early exit above it "
        "(`if rank != 0: return`), or around every call of the function it is in. "
        "The same hang follows an `if` each rank decides from its own data: `if any(len(t) < 1 "
        "for t in targets): continue` or `if torch.isnan(loss): continue` above `loss.backward()` (a "
        "skipped step skips the gradient all-reduce the other ranks wait in); the `if` is reported "
        "(`ddpify.analysis.divergence`: values computed from a sharded loader's batches and the loss; a "
        "batch's size and a loop counter are alike on every rank; loop counts and the clock are not "
        "reported, where that analysis over-approximates). Keep "
        "the step on every rank (a zero loss, `loss * 0`), or agree first (`dist.all_reduce` of the flag). "
        "An exit by `raise` stops the job loudly and is not reported."
    )
    # Opt-in: its only findings on the 47-script corpus (rank-0 evaluation under no_grad) turned
    # out not to hang, and are no longer reported, so nothing measures it on real code now.
    fix_notes = "No automatic fix: which ranks should take part is the script's decision."
    false_positives = (
        "A collective on a subgroup that contains only the guarded ranks; a decision from the batch that the data "
        "makes the same everywhere (a dataset already filtered of empty targets, a loss that never turns NaN)."
    )
    valid = (
        """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

model = DDP(model, device_ids=[rank])
loader = DataLoader(train_set, batch_size=8, sampler=DistributedSampler(train_set))
for step, (x, y) in enumerate(loader):
    if x.size(0) < 8 or step % 100 == 99:
        continue  # every rank's shard has the same length: the ranks skip alike
    loss = criterion(model(x), y)
    if not torch.isfinite(loss):
        raise FloatingPointError(f"loss {loss.item()}")  # stops the job, no hang
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
""",
        """\
import torch
import torch.distributed as dist

if dist.get_rank() == 0:
    torch.save(model.module.state_dict(), "model.pt")
dist.barrier()
""",
        """\
import torch.distributed as dist

if args.local_rank not in [-1, 0]:
    dist.barrier()  # the others wait while rank 0 downloads
dataset = load_dataset()
if args.local_rank == 0:
    dist.barrier()
""",
        """\
import ddpify.runtime as ddpify

model = ddpify.prepare_model(model)
if ddpify.is_main_process():
    with torch.no_grad():
        preview = ddpify.unwrap(model)(fixed_noise)
ddpify.save(ddpify.unwrap(model).state_dict(), "model.pt")
""",
        """\
import torch.distributed as dist

if args.local_rank != -1:  # distributed or not: every rank answers alike
    dist.barrier()
if dist.get_rank() == 0:
    dist.all_reduce(stats)
else:
    dist.all_reduce(stats)
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler

model = DDP(model, device_ids=[rank])
loader = DataLoader(train_set, batch_size=8, sampler=DistributedSampler(train_set))
for images, targets in loader:
    if any(len(target) < 1 for target in targets):
        continue  # this rank skips the step; the others wait in backward's all-reduce
    loss = criterion(model(images), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
        ),
        Invalid(
            """\
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model, device_ids=[rank])
if rank == 0:
    with torch.no_grad():
        val_loss = criterion(model(x_val), y_val)
    dist.barrier()
"""
        ),
        Invalid(
            """\
import ddpify.runtime as ddpify

if ddpify.is_main_process():
    ddpify.save(ddpify.unwrap(model).state_dict(), "best.pt")
"""
        ),
        Invalid(
            """\
import torch.distributed as dist


def evaluate(model, loader):
    correct = count(model, loader)
    dist.all_reduce(correct)  # only rank 0 ever gets here
    return correct


def train(rank):
    if rank == 0:
        evaluate(model, val_loader)
"""
        ),
        Invalid(
            """\
import torch.distributed as dist


def log_metrics(rank, loss):
    if rank != 0:
        return
    dist.barrier()
"""
        ),
    )

    def __init__(self, file) -> None:
        super().__init__(file)
        self._wraps: list[Wrap] = []
        self._assigned: dict[str, list[cst.Assign]] = {}

    def visit_Module(self, node: cst.Module) -> None:
        context = self.file.analysis.context
        collectives: list[tuple[cst.Call, str, Ranks]] = []
        project = self.file.analysis.source.project
        for call in every_call(node):
            name = collective(self, call)
            if name is None:
                helper = project.helper(call)  # `utils.reduce_mean(loss)`: a project helper's collective
                runs = helper.collective if helper is not None else None
                runs = runs or opt_in_collective(self.file.analysis.source, call)  # `log(msg, sync=True)`
                name = f"{short(call.func)}() runs {runs}(), so {short(call.func)}" if runs else None
            if name is None or context.process(call) is Process.PARENT:
                continue
            ranks = context.ranks(call)  # its own function's guards, and those of its callers
            if ranks.selection.rank_dependent:
                collectives.append((call, name, ranks))
        for call, name, _ in collectives:
            if not self._balanced(call, name, collectives):
                self.report(
                    call, f"{name}() under {_shown(context.restriction(call))}: the ranks that skip it never join it, so the job hangs"
                )
        self._check_per_rank_decisions(node, collectives)
        self._wraps = ddp_wraps(self, node)
        self._assigned = assignments(self, node) if self._wraps else {}
        for call in every_call(node):
            self._check_forward(call)

    def _check_per_rank_decisions(self, node: cst.Module, guarded: list[tuple[cst.Call, str, Ranks]]) -> None:
        """A backward or a collective that a decision from this rank's own data or clock may skip
        (``ddpify.analysis.divergence``), reported once per decision, at it."""
        divergence = self.file.analysis.context.divergence
        skip = {call for call, _, _ in guarded}  # under a rank test: reported above
        seen: set[cst.CSTNode] = set()
        calls = [c for c in every_call(node) if c not in skip and (is_method_call(c, "backward") or collective(self, c))]
        for call in sorted(calls, key=lambda c: not is_method_call(c, "backward")):  # name the backward first
            decision = divergence.decision(call)
            if decision is None or decision.kind != "data" or decision.node in seen or not _skips(self, decision.node):
                continue
            seen.add(decision.node)
            what = "backward()" if is_method_call(call, "backward") else f"{short(call.func)}()"
            self.report(
                decision.node,
                f"`{short(decision.node)}` decides whether this rank reaches {what} (line {self.file.analysis.source.line(call)}), and "
                f"{decision.reason}: a rank that skips it leaves the others waiting in the collective, so the job "
                "hangs; take the step on every rank (a zero loss) or agree on the decision first (dist.all_reduce of the flag)",
            )

    def _balanced(self, call: cst.Call, name: str, collectives: list[tuple[cst.Call, str, Ranks]]) -> bool:
        """The same collective under complementary guards of one function (``if rank == 0:
        barrier()`` ... ``else: barrier()``): together they reach every rank."""
        source = self.file.analysis.source
        function = source.enclosing_function(call)
        reached = 0
        for other, other_name, ranks in collectives:
            if other_name == name and source.enclosing_function(other) is function:
                reached |= ranks.may
        return reached & DISTRIBUTED == DISTRIBUTED

    def _check_forward(self, call: cst.Call) -> None:
        model = code(call.func)
        wraps = [w for w in self._wraps if w.target == model]
        if not wraps:
            return
        context = self.file.analysis.context
        if not context.local(call).selection.rank_dependent:
            return  # the guard must be in the same function: a parameter elsewhere may hold the inner module
        scope = scope_of(self, call)
        if any(w.scope is scope for w in wraps) and wrap_in_effect(self, self._wraps, self._assigned, call, model) is None:
            return
        if self.file.analysis.dataflow.batches.no_grad_around(call) is not None:
            return  # evaluation: no gradient all-reduce to wait in (see `why`: backend-dependent, not a hang)
        guard = _shown(context.restriction(call, callers=False))
        inner = f"ddpify.unwrap({model})" if self.file.already_converted else f"{model}.module"
        consequence = "it prepares a gradient all-reduce (and broadcasts buffers) the other ranks never join: the job hangs"
        self.report(call, f"forward of the DDP-wrapped {model} under {guard}: {consequence}; call {inner} here")


def _skips(rule: Rule, test: cst.CSTNode) -> bool:
    """``test`` is that of an ``if`` (not a loop's count, which the analysis over-approximates),
    and the ``if`` does not end by raising: a rank that raises stops the job loudly."""
    statement = rule.parent(test)
    if not isinstance(statement, cst.If) or not isinstance(statement.body, cst.IndentedBlock) or not statement.body.body:
        return False
    last = statement.body.body[-1]
    return not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Raise))


def _shown(test: cst.BaseExpression | None) -> str:
    return f"`{code(test)}`" if test is not None else "a rank test"
