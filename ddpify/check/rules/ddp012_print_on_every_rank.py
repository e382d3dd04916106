from __future__ import annotations

import libcst as cst

from ddpify.analysis.console_logging import METHOD_LEVELS, console_setup, standard_logger
from ddpify.analysis.loggers import WHOLE, leveled_by_rank
from ddpify.analysis.ranks import MAIN, REST
from ddpify.check import fixes, places
from ddpify.check.file_info import read_with_imports
from ddpify.check.rule import Invalid, Rule, short
from ddpify.convert import names
from ddpify.convert.writes import TQDM_WRITE
from ddpify.tree.cstutil import is_method_call, of_types

# What a console handler at its usual level (INFO) prints.
_LOG_LEVELS = frozenset({"info", "warning", "warn", "error", "critical", "exception"})


class PrintOnEveryRank(Rule):
    code = "DDP012"
    default = True
    name = "print-on-every-rank"
    message = "print/progress bar on every rank: N copies of every line"
    severity = "note"
    why = (
        "Each process prints, so logs repeat N times and tqdm bars overwrite one another "
        "(tqdm/tqdm#1294). Print on global rank 0 only, and disable progress bars on the other "
        "ranks. Also reported: `tqdm.write(s)` and `bar.write(s)` (a class method: it prints on every rank even where "
        "the bar is disabled); `logger.info(...)` (warning, error...) on a logger that a helper of "
        "the project's own modules returns with a console handler attached on every rank "
        "(`logger, stats = initialize_exp(args)` whose `create_logger` adds a `logging.StreamHandler()` "
        "with no rank test around it or a per-rank level), and `logger.info(...)` / `logging.info(...)` "
        "(`logger = logging.getLogger(...)`) in a file that runs `logging.basicConfig(level=logging.INFO)` on "
        "every rank (a console handler at INFO in every process; not a file-only one, nor a level the rank "
        "decides: `level=logging.INFO if rank in [-1, 0] else logging.WARN`); a helper that attaches it on rank 0 only "
        "makes a rank-0 logger. The same for a logging setup elsewhere in the project: a helper the file calls "
        "that gives the root logger a level and a console handler on every rank (`init_logger()`: "
        "`logger.handlers = [logging.StreamHandler()]`; `logging.basicConfig(stream=sys.stdout)` or "
        "`handlers=[StreamHandler()]` count as a console), and for a module with no setup of its own, the "
        "project files that import it (the entry script's `create_logger(...)`, a `basicConfig` at the top of an "
        "`mp.spawn` script that every worker runs again); `logger.warning(...)` counts where the setup is at "
        "WARNING or lower, and a logger the project's modules bind to `logging.getLogger(...)` "
        "(`from tools.common import logger`) is a standard logger. A rank test anywhere in that setup, here "
        "or in an importing file, quiets it: a level of the rank, a filter on the rank "
        "(`logger.addFilter(lambda r: rank == 0)`), a project helper muting the loggers it is handed off the "
        "main process; so does a console handler of its own higher level. Not reported: a progress bar whose `disable=` is true off rank 0 (also "
        "`disable=not pbar` where every call of its function passes `pbar=(rank == 0)`), output under a "
        "rank test (also a parameter every call passes a rank test, `if writer:` / `if self.logger is not None:` of an object this file makes "
        "on rank 0 only, or that the project file importing it hands in on rank 0 only) or after an early exit (also at every call of the function it is in), in the process "
        "that calls `mp.spawn` (or starts `mp.Process(target=self.train)`) before the workers start, and in the functions "
        "that call it (`Trainer.run` calling `self.dist_train`), in a function that never runs (a script "
        "that joins its process group as it starts, so no module imports it, and never calls nor "
        "names the function: a module-level function or a class/static method; likewise a script with a `__main__` block "
        "that no file of its project imports; and a function nested in another that nothing names), output of a function whose decorator runs it on rank 0 only (`@rank_zero_only`, "
        "`@master_only` of mmcv or of the project, read from its code), `print` after standard output was sent to "
        "`os.devnull` on the other ranks (`sys.stdout = open(os.devnull, 'w')` under `if local_rank != 0:`), a print about the rank's own "
        "mishap (in an `except` handler or an `__exit__` whose block raised, or under a test for a non-finite value, `if torch.isnan(loss).any():`: the rank that met it "
        "must tell, rank 0 may not have), `print` after `builtins.print` was replaced on "
        "the other ranks (`setup_for_distributed(is_master)`, as DETR/DeiT/MAE do; a helper of the "
        "project's own modules that the file imports is read to see whether it replaces print, "
        "whatever its name, and a rank test such as `utils.is_main_process()` defined there counts as one), and lines that name "
        'their rank (`print(f"[GPU{rank}] ...")`) or pass `force=True` to such a replaced print: '
        "one per rank is what they mean."
    )
    fix = "safe"
    fix_notes = (
        "The fix puts the print statement under `if not dist.is_initialized() or dist.get_rank() == 0:` "
        "and gives a tqdm bar `disable=(dist.is_initialized() and dist.get_rank() != 0)` (or-ed with its "
        "own `disable=`): plain PyTorch, no collective, and a single-process run prints as before. A "
        "print inside a larger expression gets no fix."
    )
    false_positives = (
        "One-off start-up or configuration lines (technically repeated, rarely worth a change), and "
        "prints silenced by an override installed in a module the analysis cannot read (an installed "
        "package, or more than two imports away) under a name it does not know; an INFO line of a file "
        "that runs `logging.basicConfig(level=INFO)` when a module it imports raises the level on the other ranks."
    )
    valid = (
        """\
import os
import sys

import torch.distributed as dist


class HiddenPrints:
    def __init__(self, rank):
        self.rank = rank

    def __enter__(self):
        if self.rank == 0:
            return
        self._stdout = sys.stdout
        sys.stdout = open(os.devnull, "w")

    def __exit__(self, *exc):
        if self.rank != 0:
            sys.stdout.close()
            sys.stdout = self._stdout


dist.init_process_group("nccl")
with HiddenPrints(dist.get_rank()):  # standard output goes to /dev/null on the other ranks
    print("training starts")
""",
        """\
import torch.distributed as dist
import torch.multiprocessing as mp


class Trainer:
    def run(self, model):
        print("parameters:", sum(p.numel() for p in model.parameters()))  # the launching process
        return self.dist_train(model)

    def dist_train(self, model):
        print(f"using {self.world_size} GPUs")  # before the workers start, in the parent
        workers = [mp.Process(target=self.train, args=(rank, model)) for rank in range(self.world_size)]
        for worker in workers:
            worker.start()

    def train(self, rank, model):
        dist.init_process_group("nccl", rank=rank, world_size=self.world_size)
        if rank == 0:
            print("training")
""",
        """\
import torch
import torch.distributed as dist

for it, batch in enumerate(loader):
    loss = model(batch).mean()
    if torch.isnan(loss).any():
        print(f"Detected NaN, skipping iteration {it}")  # this rank's own batch: only it can tell
        continue
    try:
        loss.backward()
    except RuntimeError as error:
        print("backward failed:", error)  # raised on this rank
        raise
""",
        """\
import torch.distributed as dist

if dist.get_rank() == 0:
    print("epoch done")
""",
        """\
import torch.distributed as dist
from tqdm import tqdm


def evaluate(model, loader, pbar=True):
    for batch in tqdm(loader, disable=not pbar):  # every call below passes a rank test
        model(batch)


rank = dist.get_rank()
evaluate(model, val_loader, pbar=(rank == 0))
evaluate(model, test_loader, pbar=rank == 0)
""",
        """\
import ddpify.runtime as ddpify
from tqdm import tqdm

ddpify.print("epoch done")
for batch in tqdm(loader, disable=not ddpify.is_main_process()):
    pass
""",
        """\
import builtins as __builtin__
import torch.distributed as dist


def setup_for_distributed(is_master):
    builtin_print = __builtin__.print

    def print(*args, **kwargs):
        if is_master or kwargs.pop("force", False):
            builtin_print(*args, **kwargs)

    __builtin__.print = print


def main(args):
    dist.init_process_group("nccl")
    setup_for_distributed(dist.get_rank() == 0)
    print("training starts")  # the other ranks' print is a no-op now
""",
        """\
import builtins
import torch.distributed as dist

if dist.get_rank() != 0:
    builtins.print = lambda *args, **kwargs: None
print("only rank 0 gets here with a real print")
""",
        """\
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world_size):
    print(f"[GPU{rank}] starting")  # one line per rank, on purpose


def main():
    print("launching 2 workers")  # the parent, before the workers start: once
    mp.spawn(worker, args=(2,), nprocs=2)


if __name__ == "__main__":
    main()
""",
        """\
import torch.distributed as dist


def log(message):
    print(message)


def main_worker(gpu, ngpus_per_node, args):
    args.rank = args.rank * ngpus_per_node + gpu
    if args.rank % ngpus_per_node == 0:
        log("epoch done")  # every call of log() is guarded
""",
        """\
import torch.distributed as dist

dist.init_process_group("nccl")
print("loading shard", force=True)  # the project's own print override, forced onto every rank
""",
        """\
import builtins

import torch.distributed as dist
import torch.multiprocessing as mp


def validate(model):
    print("validating")  # runs after main_worker silenced print on the other ranks


def main_worker(gpu, ngpus, args):
    if gpu != 0:
        def print_pass(*args):
            pass
        builtins.print = print_pass
    dist.init_process_group("nccl", rank=gpu, world_size=ngpus)
    validate(None)


if __name__ == "__main__":
    mp.spawn(main_worker, nprocs=2, args=(2, None))
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist
from tqdm import tqdm


def evaluate(model, loader, pbar=True):
    for batch in tqdm(loader, disable=not pbar):
        model(batch)


rank = dist.get_rank()
evaluate(model, val_loader, pbar=(rank == 0))
evaluate(model, test_loader)  # the default: a bar on every rank
""",
            """\
import torch.distributed as dist
from tqdm import tqdm


def evaluate(model, loader, pbar=True):
    for batch in tqdm(loader, disable=(not pbar) or (dist.is_initialized() and dist.get_rank() != 0)):
        model(batch)


rank = dist.get_rank()
evaluate(model, val_loader, pbar=(rank == 0))
evaluate(model, test_loader)  # the default: a bar on every rank
""",
        ),
        Invalid(
            """\
import torch.distributed as dist

print("epoch done")
""",
            """\
import torch.distributed as dist

if not dist.is_initialized() or dist.get_rank() == 0:
    print("epoch done")
""",
        ),
        Invalid(
            """\
import torch.distributed as dist
from tqdm import tqdm

for batch in tqdm(loader):
    pass
""",
            """\
import torch.distributed as dist
from tqdm import tqdm

for batch in tqdm(loader, disable=(dist.is_initialized() and dist.get_rank() != 0)):
    pass
""",
        ),
        Invalid(
            """\
import torch.distributed as dist
from tqdm import tqdm

bar = tqdm(loader, disable=dist.get_rank() != 0)
for batch in bar:
    bar.write("resumed")  # tqdm.write: every rank, disabled bar or not
""",
            """\
import torch.distributed as dist
from tqdm import tqdm

bar = tqdm(loader, disable=dist.get_rank() != 0)
for batch in bar:
    if not dist.is_initialized() or dist.get_rank() == 0:
        bar.write("resumed")  # tqdm.write: every rank, disabled bar or not
""",
        ),
        Invalid(
            """\
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world_size):
    print("epoch done")  # each worker prints it


if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
""",
            """\
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world_size):
    if not dist.is_initialized() or dist.get_rank() == 0:
        print("epoch done")  # each worker prints it


if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
""",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.qualified(node)
        printing = bool(qualified & names.PRINT) or self._tqdm_write(node, qualified)
        made_by = None if printing or qualified & names.TQDM else self._console_logger(node) or self._configured_console(node)
        if not printing and not qualified & names.TQDM and made_by is None:
            return
        context, output = self.file.analysis.context, self.file.analysis.output
        if not context.every_rank(node) or output.tagged_per_rank(node) or output.for_a_debugger(node):
            return
        if self._own_anomaly(node):
            return  # "Detected NaN, skipping": the rank that met it tells; rank 0 may not have
        if made_by is not None:
            self.report(
                node,
                f"{short(node.func)}(...) prints on every rank: {made_by} gives every rank a logger with a console "
                "handler; log on rank 0 only, or attach the console handler on rank 0 only (a higher level on the others)",
            )
            return
        if printing:
            if (output.print_silenced(node) and qualified & names.PRINT) or any(
                a.keyword is not None and a.keyword.value == "force" for a in node.args
            ):
                return  # rank 0 only already, or forced onto every rank by the script's own print
            guard = fixes.rank_zero_guard(self.file, node, self.parent)
            if guard is None:
                self.report(node)
                return
            line, build, imports = guard
            self.report(node, replacement=build, target=line, imports=imports)
            return
        if self._disabled_off_rank_zero(node):
            return
        dist, imports = fixes.dist_reference(self.file)
        quiet = fixes.quiet_progress_bar(node, f"({dist}.is_initialized() and {dist}.get_rank() != 0)")
        if quiet is not None:
            self.report(node, replacement=quiet, imports=imports)

    def _own_anomaly(self, node: cst.Call) -> bool:
        """The print runs only where this rank's own run went wrong: in an ``except`` handler,
        or in the body of a test for a non-finite value of its own batch (``if
        torch.isnan(loss):``; code after that branch's ``continue`` is not about it). A
        rank-0-only print would hide what the other ranks met."""
        decision = self.file.analysis.context.divergent_condition(node)
        if decision is None:
            return places.in_failed_exit(self, node)  # `__exit__`'s `if type is not None:`
        branch = self.parent(decision.node) if isinstance(decision.node, cst.BaseExpression) else decision.node
        if not (isinstance(branch, (cst.If, cst.ExceptHandler)) and any(a is branch.body for a in self.ancestors(node))):
            return False  # after the branch (past its `continue`), not in it: not about that mishap
        if decision.kind == "exception":
            return True
        calls = of_types(decision.node, cst.Call) if decision.kind == "data" else []
        return any(self.qualified(c) & names.NON_FINITE_CHECKS or is_method_call(c, *names.NON_FINITE_METHODS) for c in calls)

    def _disabled_off_rank_zero(self, node: cst.Call) -> bool:
        """``disable=`` is true on the other ranks and false on rank 0, as the rank tests tell
        (``disable=not pbar`` where every call passes ``pbar=(rank == 0)``)."""
        value = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "disable"), None)
        if value is None:
            return False
        ranks = self.file.analysis.rank_tests.ranks(value)
        return bool(ranks.must & REST) and not ranks.may & MAIN

    def _tqdm_write(self, node: cst.Call, qualified: set[str]) -> bool:
        """``tqdm.write(s)``, or ``bar.write(s)`` on a bar this file made (tqdm's class method:
        it prints on every rank, even where the bar itself is disabled)."""
        if qualified & TQDM_WRITE:
            return True
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "write" and isinstance(func.value, cst.Name)):
            return False
        made = [v for _, v in self.file.analysis.source.assignments.get(func.value.value, []) if isinstance(v, cst.Call)]
        return bool(made) and all(self.qualified(v) & names.TQDM for v in made)

    def _configured_console(self, node: cst.Call) -> str | None:
        """``logger.info(...)`` / ``logging.info(...)`` on a standard logger (``logging.getLogger``,
        here or a project module's) where the root logger has a console handler on every rank at
        a level that lets the call through: set up by this file (``logging.basicConfig(level=
        logging.INFO)``: DialoGPT, CodeBERT), a project helper it calls (BERT-NER's
        ``init_logger``) or, for a module with no setup of its own, the project files that
        import it (CvT's tools/train.py). What sets it up, or None: a file-only setup, a level
        the rank decides, or above the call's."""
        func = node.func
        if (
            not isinstance(func, cst.Attribute)
            or func.attr.value not in METHOD_LEVELS
            or not standard_logger(self.file.analysis.source, node)
        ):
            return None
        level, by = self._console_level()
        return by if level is not None and level <= METHOD_LEVELS[func.attr.value] else None

    def _console_level(self) -> tuple[int | None, str]:
        """``ddpify.analysis.console_logging.console_setup`` of this file, asked once."""
        memo = self.file.memo
        if "console-level" not in memo:
            memo["console-level"] = console_setup(self.file.analysis.source, self.file.analysis.context, read_with_imports)
        return memo["console-level"]  # type: ignore[return-value]

    def _console_logger(self, node: cst.Call) -> str | None:
        """``logger.info(...)`` where this function bound ``logger`` (alone or in a tuple) to
        what a project helper returns as a logger printing on every rank, or the module did
        where the function binds no ``logger`` of its own (TorchSeg's ``logger = get_logger()``
        read in ``Engine.__init__``): the helper's name."""
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in _LOG_LEVELS or not isinstance(func.value, cst.Name):
            return None
        source = self.file.analysis.source
        home = source.enclosing_function(node)
        if home is not None and not any(source.enclosing_function(s) is home for s, _ in source.assignments.get(func.value.value, [])):
            home = None  # the module's logger
        binding = dict.fromkeys(s for s, _ in source.assignments.get(func.value.value, []) if isinstance(s, cst.Assign))
        for statement in binding:  # the statements that bind the name, not every assignment of the file
            if len(statement.targets) != 1 or not isinstance(statement.value, cst.Call) or source.enclosing_function(statement) is not home:
                continue
            target = statement.targets[0].target
            if isinstance(target, cst.Name):
                wanted, bound = WHOLE, target.value == func.value.value
            elif isinstance(target, cst.Tuple):
                positions = [
                    i for i, e in enumerate(target.elements) if isinstance(e.value, cst.Name) and e.value.value == func.value.value
                ]
                wanted, bound = (positions[0], True) if positions else (WHOLE, False)
            else:
                continue
            helper = source.project.helper(statement.value) if bound else None
            depends = self.file.analysis.rank_tests.depends_on_rank
            if helper is not None and helper.console_logger == wanted and not leveled_by_rank(statement.value, depends):
                return f"{short(statement.value.func)}(...)"
        return None
