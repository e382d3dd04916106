from __future__ import annotations

import functools
import re

import libcst as cst

from ddpify.analysis.context import Process
from ddpify.analysis.seeding import ALL_RNGS, LIBRARY_SEEDERS, Seeding, default_seed, seeding
from ddpify.check.rule import Invalid, Rule, short
from ddpify.check.script import is_data_parallel
from ddpify.check.seeds import family, seeds
from ddpify.convert import names, rewrites
from ddpify.tree.cstutil import code, is_simple_reference, of_types

# Seeds that differ between processes without a rank: ``torch.initial_seed()`` in a DataLoader
# worker follows the rank's own RNG (seeded per rank, or reported where it is seeded alike). A
# worker id alone (``seed + worker_id``) is not: worker k of every rank gets the same seed.
_PER_PROCESS = re.compile(r"initial_seed", re.I)
# Seed calls this close after a reported one are the same seeding block, reported once.
_SEED_BLOCK_LINES = 4


class SameSeedEveryRank(Rule):
    code = "DDP011"
    name = "same-seed-every-rank"
    message = "the same seed on every rank: augmentation, dropout and worker RNG streams repeat on all ranks"
    severity = "warning"
    why = (
        "Every process runs the same `torch.manual_seed(seed)` (or `random.seed`, "
        "`np.random.seed`), so all ranks draw identical random numbers: the same random crops and "
        "flips, the same dropout masks, the same DataLoader worker seeds. The ranks see different "
        "samples but transform them in lockstep, which wastes much of the augmentation that the "
        "larger effective batch was meant to average over; this is why DETR seeds with "
        "`args.seed + utils.get_rank()` (facebookresearch/detr#297, huggingface/transformers#37932). "
        "Seeding with `seed + rank` from the start is not right either: models initialised from "
        "the RNG, or datasets generated from it, must be identical on every rank; seed per rank "
        "once the models exist. Not reported: seeds that differ per rank (a rank in the expression, "
        "also through a variable or every caller of a `set_seed(seed)` helper, or a number drawn "
        "from an RNG that was seeded per rank or not at all: `torch.manual_seed(np.random.randint(...))` "
        "after `np.random.seed(seed * world_size + rank)`), and seeds of an RNG the script never "
        "uses while training (`np.random.seed(0)` in a script that draws nothing from NumPy in a "
        "loop or helper; `torch.manual_seed(0)` in a script with no dropout, random augmentation, "
        "DataLoader workers or torch random draws in a loop: a synthetic dataset drawn next to the "
        "seed must be the same on every rank). The same seed is harmless, so not reported, when "
        "nothing random differs per rank after it: a sharded deterministic loader, no dropout, no "
        "random augmentation, no shuffling DataLoader or loader workers; weight initialisers "
        "(`torch.nn.init.normal_`: identical initial weights are what DDP wants) and draws from a "
        "generator of their own (`torch.multinomial(p, 1, generator=sample_rng)`, seeded per rank) "
        "do not count. Where dropout, augmentation or loader workers draw from the seeded RNG it is "
        "reported: also the dropout of a transformer library's network whose architecture has it by default "
        "(BERT, GPT-2, ELECTRA, T5: built, loaded with `from_pretrained`, or a project class on such a base), not a "
        "LLaMA-style decoder or an `Auto*` class (any architecture); not the workers of a loader over a dataset class "
        "of the project that draws nothing (a tokenised stream). Seed calls in a row are one finding. A DataLoader `worker_init_fn` that seeds from the worker id alone "
        "(`random.seed(seed + worker_id)`) gives worker k of every rank the same stream and is "
        "reported; one seeded from `torch.initial_seed()` follows its rank's own RNG, and one handed the rank "
        "(`partial(worker_init_fn, rank=rank, seed=seed)`) reseeds each rank's workers apart: a dataset read only "
        "by such loaders draws its augmentation there, whatever the main process was seeded with. Draws of a project "
        "call that only some ranks run (a logger built on local rank 0) are that rank's own. A helper of the project's own modules that seeds the RNGs with its argument "
        "(`utils.fix_random_seeds(args.seed)`, or `set_seed(args)` seeding with `args.seed`) is a "
        "seed call like `torch.manual_seed`, also where it fills a seed in when none is given (`if seed is None: seed = "
        "...`): a call that leaves the seed out (`set_random_seed()`) seeds with what it fills in; so are the libraries' "
        "seed-everything helpers (`transformers.set_seed`, `torch_geometric.seed_everything`, MONAI's "
        "`set_determinism(seed=...)`, whose `Rand*` transforms take that seed up); one that adds the rank itself (`torch.manual_seed(seed + get_rank())`) is not. Nothing seeding torch at all is the same seed on every rank: torch's default generator starts from one fixed seed in every process, so a training step that draws from it (`torch.randint` timesteps, `torch.randn_like` noise in a function or loop that calls `backward()`) draws the same numbers on every rank, and a DataLoader seeds its workers from it (worker k of every rank gets the same seed: a training loader with workers, and no `generator=` of its own, over a dataset whose code draws random numbers is reported); reported there when nothing that runs with the file (the file, the project files it imports, those that import it up to the entry script) calls anything that may seed torch (`manual_seed`, a `set_seed` or `seed_everything` helper). A seed in the process that calls `mp.spawn` (also "
        "through a launch helper of the project) is not this rule's: the spawned workers start "
        "fresh interpreters and never see it, which DDP034 reports. Those workers, though, start from torch's fixed "
        "default seed: where a worker trains, nothing it runs seeds torch (the code it reaches, the module-level code "
        "each worker re-runs, a project module seeding on import, a project helper or class it calls, a seed-named "
        "helper of an installed package) and it consumes torch's RNG (a training-step draw, dropout, augmentation, a "
        "loader with workers, also through the project's helpers), the worker function is reported once, at its "
        "`def` (forked `mp.Process` children inherit the parent's state instead)."
    )
    default = True
    fix = "unsafe"
    fix_notes = (
        "In a script that already uses ddpify.runtime the fix writes `ddpify.seed(torch.manual_seed, "
        "seed)` (the same seed until training starts, then `seed + rank` on ranks > 0); it is unsafe "
        "because random streams on ranks > 0 change. Hand-written scripts get no fix: where the "
        "models are built relative to the seed decides whether `seed + rank` is right."
    )
    false_positives = (
        "A seed set for a one-time split of the data (`random.seed(s)` then `random.shuffle(samples)` carving a "
        "held-out set), which every rank must draw alike, when the script also draws from that RNG later. "
        "Randomness consumed only in a module the script does not import itself (a dataset class "
        "another project module builds for it). A function or class of the project's modules that "
        "the script calls or builds counts with what it draws (a model class with dropout layers, "
        "a trainer drawing latents with `torch.randn`), whether or not that code runs. A training "
        "step's draws where torch is seeded for the script by a framework or an installed package "
        "without a seed-named call in the files that run with it. A worker seeded by code of an installed package "
        "(a trainer library's own seeding) is reported as never seeded."
    )
    valid = (
        """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(rank)
    for step in range(10):
        noise = torch.randn(4)


if __name__ == "__main__":
    torch.manual_seed(0)  # the parent's: DDP034 says whether the workers are seeded
    mp.spawn(worker, args=(2,), nprocs=2)
""",
        """\
import torch
import torch.distributed as dist

torch.manual_seed(args.seed + dist.get_rank())
loader = torch.utils.data.DataLoader(dataset, num_workers=4, sampler=torch.utils.data.DistributedSampler(dataset))
""",
        """\
import numpy as np
import torch.distributed as dist


def set_seed(seed):
    np.random.seed(seed)


set_seed(args.seed + dist.get_rank())
for step in range(10):
    mask = np.random.rand(16) > 0.5
""",
        """\
import os
import torch
import torch.distributed as dist

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    ddp_rank = int(os.environ["RANK"])
    seed_offset = ddp_rank  # each process gets a different seed
else:
    seed_offset = 0
torch.manual_seed(1337 + seed_offset)
for step in range(10):
    x = torch.randn(4, 4)
""",
        """\
import numpy as np
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
np.random.seed((seed * dist.get_world_size() + dist.get_rank()) % (1 << 31))
torch.manual_seed(np.random.randint(1 << 31))  # drawn from a per-rank RNG
noise = torch.randn(8)
""",
        """\
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
torch.manual_seed(0)  # identical initial weights; nothing random happens afterwards
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4))
for x, y in fixed_batches:
    torch.nn.functional.mse_loss(model(x), y).backward()
""",
        """\
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.manual_seed(1337)  # no dropout, a sharded deterministic loader: the same seed is harmless
model = torch.nn.Linear(8, 8)
torch.nn.init.normal_(model.weight, std=0.02)  # the same initial weights on every rank
sample_rng = torch.Generator().manual_seed(42 + rank)
for step in range(10):
    probs = torch.softmax(model(torch.ones(1, 8)), -1)
    token = torch.multinomial(probs, 1, generator=sample_rng)  # its own per-rank generator
""",
        """\
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
data = torch.randn(64, 8)  # unseeded, at set-up: the same data on every rank, as it should be
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))


def evaluate():
    with torch.no_grad():
        return model(data + torch.randn_like(data)).mean()  # no training step here


for x in data.split(8):
    model(x).sum().backward()
""",
    )
    invalid = (
        Invalid(
            """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def train_step(model, optimizer, audio):
    t = torch.randint(0, 50, [audio.shape[0]])  # nothing seeds torch: the same t on every rank
    noise = torch.randn_like(audio)
    loss = (model(audio + noise, t) - noise).pow(2).mean()
    loss.backward()
    optimizer.step()


def worker(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    model = torch.nn.parallel.DistributedDataParallel(Denoiser())
    optimizer = torch.optim.Adam(model.parameters())
    for audio in loader:
        train_step(model, optimizer, audio)


if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
"""
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
torch.manual_seed(args.seed)
model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.1))
"""
        ),
        Invalid(
            """\
import random

import numpy as np
import torch.distributed as dist

dist.init_process_group("gloo")
SEED = 0
random.seed(SEED)
np.random.seed(SEED)
for batch in loader:
    crop = random.randint(0, 32), np.random.rand()  # the same "random" crop on every rank
"""
        ),
        Invalid(
            """\
import random

import torch
import torch.distributed as dist


def set_random_seed(seed=None):
    if seed is None:
        seed = 1234
    random.seed(seed)
    torch.manual_seed(seed)


dist.init_process_group("nccl")
set_random_seed()  # seeds with the 1234 it fills in, on every rank
loader = torch.utils.data.DataLoader(dataset, num_workers=8)
"""
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
torch.manual_seed(args.seed + args.lora_rank)  # a LoRA rank is no process rank
loader = torch.utils.data.DataLoader(dataset, num_workers=8)
"""
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist
import ddpify.runtime as ddpify

dist.init_process_group("nccl")
torch.manual_seed(args.seed)
for step in range(100):
    noise = torch.randn(4)
""",
            """\
import torch
import torch.distributed as dist
import ddpify.runtime as ddpify

dist.init_process_group("nccl")
ddpify.seed(torch.manual_seed, args.seed)
for step in range(100):
    noise = torch.randn(4)
""",
        ),
    )

    def __init__(self, file) -> None:
        super().__init__(file)
        self._active = False
        self._last: tuple[cst.FunctionDef | None, int] | None = None  # the last seed call reported

    def visit_Module(self, node: cst.Module) -> None:
        self._active = is_data_parallel(self, node)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._active or any(a.star for a in node.args):
            return
        found = self._seeded(node)
        if found is None:
            return
        seed, families = found
        if self._inside_local_helper(node):
            return  # `def set_seed(seed): torch.manual_seed(seed)`: reported where it is called, with what
        rngs = seeds(self)
        consumed = self._in_worker_init(node) or any(rngs.consumed(f, node) for f in families)
        if self._per_rank(node, seed) or not consumed:
            return  # per rank, or an RNG nothing in the script draws from after all
        if self.file.analysis.context.process(node) is Process.PARENT:
            return  # the spawned workers never see the parent's seed: DDP034's finding
        if not self.file.already_converted and self._continues_reported(node):
            return  # (a converted file's fix rewrites each call)
        self.report(
            node,
            message=f"{short(node.func)}({short(seed)}) gives every rank the same seed: augmentation, dropout and worker RNG streams repeat on all ranks"
            if any(a.value is seed for a in node.args)
            else f"{short(node)} seeds with {short(seed)}, the same on every rank: augmentation, dropout and worker RNG streams repeat on all ranks",
            replacement=functools.partial(rewrites.seeded, node)
            if self.file.already_converted and self.qualified(node) & names.SEED_FUNCTIONS
            else None,
        )

    def leave_Module(self, original_node: cst.Module) -> None:
        if not self._active or self.file.already_converted:
            return
        context = self.file.analysis.context
        reported = False
        for loader in seeds(self).unseeded_worker_loaders():
            if context.process(loader) is Process.PARENT or not context.every_rank(loader):
                continue
            reported = True
            self.report(
                loader,
                message="DataLoader workers are seeded from torch's RNG, which nothing seeds: every process starts from "
                "torch's fixed default seed, so worker k of every rank draws the same random augmentation (seed per "
                "rank: `torch.manual_seed(seed + rank)` once the model is built)",
            )
        for draw in seeds(self).unseeded_training_draws():
            if context.process(draw) is Process.PARENT or not context.every_rank(draw):
                continue
            reported = True
            self.report(
                draw,
                message=f"{short(draw)} draws from torch's RNG, which nothing seeds: every process starts from torch's "
                "fixed default seed, so every rank draws the same numbers at every step (seed per rank: "
                "`torch.manual_seed(seed + rank)` once the model is built)",
            )
        for worker, consumer in [] if reported else seeds(self).unseeded_workers():
            parent_seeds = any(s.family == "torch" and context.process(s.call) is Process.PARENT for s in seeds(self).calls)
            direct = context.call_sites(worker) if parent_seeds else []  # `else: main_worker(...)` after the parent's seed
            also = (
                f"; called directly (line {self.file.analysis.source.line(direct[0])}), it runs after the launching process's seed, the same on every rank too"
                if direct
                else ""
            )
            self.report(
                worker,
                message=f"the processes started to run {worker.name.value}() never seed torch (a seed in the launching "
                f"process does not reach them): each starts from torch's fixed default seed, so {short(consumer)} draws "
                f"the same numbers on every rank{also}; seed in the worker: `torch.manual_seed(seed + rank)` once the model is built",
            )

    def _continues_reported(self, node: cst.Call) -> bool:
        """A seed call that follows a reported one of the same function within a few lines
        (``torch.manual_seed(s)`` then ``torch.cuda.manual_seed_all(s)``): one problem, one finding."""
        source = self.file.analysis.source
        here = (source.enclosing_function(node), source.line(node))
        last, self._last = self._last, here
        return last is not None and last[0] is here[0] and 0 <= here[1] - last[1] <= _SEED_BLOCK_LINES

    def _in_worker_init(self, node: cst.Call) -> bool:
        """The seed is set in a DataLoader's ``worker_init_fn``: it exists for the worker's
        augmentation, which runs in the dataset code of whatever module."""
        function = self.file.analysis.source.enclosing_function(node)
        if function is None:
            return False
        handed = self.file.analysis.source.mentions_of(function)
        return any(
            isinstance(arg := self.parent(name), cst.Arg) and arg.keyword is not None and arg.keyword.value == "worker_init_fn"
            for name in handed
        )

    def _seeded(self, node: cst.Call) -> tuple[cst.BaseExpression, frozenset[str]] | None:
        """The seed a call sets and the RNGs it seeds: a seeding function, or a helper of the
        project's own modules that seeds with its argument (``utils.fix_random_seeds(args.seed)``)."""
        if self.qualified(node) & names.SEED_FUNCTIONS:
            seeded = family(self, node) if node.args else None  # `np.random.seed()`: from the OS, per process
            return (node.args[0].value, frozenset({seeded})) if seeded is not None else None
        if self.qualified(node) & LIBRARY_SEEDERS:  # `transformers.set_seed(args.seed)`, `set_determinism(seed=s)`
            first = node.args[0] if node.args else None
            return (first.value, ALL_RNGS) if first is not None and (first.keyword is None or first.keyword.value == "seed") else None
        local = self._local_helper(node)
        helper = self.file.analysis.source.project.helper(node) if local is None else None
        how = local[1] if local is not None else helper.seeds if helper is not None else None
        if how is None:
            return None
        for position, arg in enumerate(node.args):
            if (arg.keyword.value == how.name) if arg.keyword is not None else position == how.index:
                if not how.attribute:
                    return arg.value, how.families
                if is_simple_reference(arg.value):  # `set_seed(args)` seeds with `args.seed`
                    return cst.parse_expression(code(arg.value) + how.attribute), how.families
                return None
        default = default_seed(self.file.analysis.source, local[0], how) if local is not None else None
        return (default, how.families) if default is not None else None  # `set_random_seed()`: its default

    def _local_helper(self, call: cst.Call) -> tuple[cst.FunctionDef, Seeding] | None:
        """``set_seed(cfg.SOLVER.SEED)`` of a module-level function of this file that seeds the
        global RNGs with its parameter (``ddpify.analysis.seeding.seeding``): one seed call,
        where the value is chosen, like a project helper's."""
        source = self.file.analysis.source
        if not isinstance(call.func, cst.Name):
            return None
        called = [f for f in source.functions_called(call) if source.enclosing_function(f) is None and not source.is_method(f)]
        how = self._seeding(called[0]) if len(called) == 1 and self._only_seeds(called[0]) else None
        return (called[0], how) if how is not None else None

    def _only_seeds(self, function: cst.FunctionDef) -> bool:
        """A seeding helper and nothing else: simple statements that seed an RNG or set a flag
        (``torch.backends.cudnn.deterministic = True``, ``os.environ["PYTHONHASHSEED"] = ...``).
        A ``main(args)`` that seeds among everything else is no helper: its seed calls are."""
        body: list[cst.BaseStatement | cst.BaseSmallStatement] = (
            list(function.body.body) if isinstance(function.body, cst.IndentedBlock) else []
        )
        for statement in body:
            if isinstance(statement, cst.If) and statement.orelse is None and code(statement.test).endswith(" is None"):
                body += statement.body.body  # `if seed is None: seed = ...`: a default filled in
                continue
            if not isinstance(statement, cst.SimpleStatementLine):
                return False
            for small in statement.body:
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                    if family(self, small.value) is None:
                        return False
                elif not isinstance(small, (cst.Assign, cst.Pass)) and not (
                    isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString)
                ):
                    return False
        return True

    def _inside_local_helper(self, call: cst.Call) -> bool:
        """A seed call in such a helper that this file calls: its callers are reported."""
        source = self.file.analysis.source
        function = source.enclosing_function(call)
        if function is None or source.enclosing_function(function) is not None or source.is_method(function):
            return False
        return self._only_seeds(function) and self._seeding(function) is not None and bool(source.call_sites(function))

    def _seeding(self, function: cst.FunctionDef) -> Seeding | None:
        memo = self.file.memo.setdefault("ddp011-seeding", {})
        assert isinstance(memo, dict)
        if function not in memo:
            memo[function] = seeding(self.file.analysis.source, self.file.analysis.rank_tests, function)
        return memo[function]

    def _per_rank(self, call: cst.Call, seed: cst.BaseExpression) -> bool:
        """The seed differs between ranks (``seed + rank``, also through a variable or a
        ``set_seed(seed)`` parameter; a draw from an RNG seeded per rank or not at all) or
        between processes (a DataLoader worker's seed)."""
        if seeds(self).varies_per_process(seed) or _PER_PROCESS.search(code(seed)):
            return True
        return any(self._parameter_seeded_per_rank(call, name.value) for name in of_types(seed, cst.Name))

    def _parameter_seeded_per_rank(self, call: cst.Call, parameter: str) -> bool:
        """``def set_seed(seed): torch.manual_seed(seed)`` called as ``set_seed(s + rank)``."""
        source = self.file.analysis.source
        function = source.enclosing_function(call)
        if function is None:
            return False
        params = [p.name.value for p in function.params.params]
        if parameter not in params:
            return False
        index = params.index(parameter)
        for caller in source.call_sites(function):
            for position, arg in enumerate(caller.args):
                matches = arg.keyword.value == parameter if arg.keyword is not None else position == index
                if matches and (seeds(self).varies_per_process(arg.value) or _PER_PROCESS.search(code(arg.value))):
                    return True
        return False
