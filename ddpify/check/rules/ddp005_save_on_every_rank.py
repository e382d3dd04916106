from __future__ import annotations

import libcst as cst

from ddpify.check import fixes
from ddpify.check.rule import Fixability, Invalid, Rule
from ddpify.check.writes import is_buffer, per_rank_path, save_destination
from ddpify.convert import names
from ddpify.tree.cstutil import code, of_types


class SaveOnEveryRank(Rule):
    code = "DDP005"
    default = True
    name = "save-on-every-rank"
    message = "torch.save runs on every rank: N processes write the same file at once"
    severity = "error"
    why = (
        "Every process executes the script, so an unguarded `torch.save` writes the checkpoint N "
        "times concurrently; files end up truncated or corrupt (NVIDIA/apex#886) and the others "
        "may read a half-written file. Save on global rank 0 only. A save that runs on some ranks "
        "only is fine: under a rank test (`if rank == 0:`, `if master_process:`, `if args.rank % "
        "ngpus_per_node == 0:`, a test of an object made on rank 0 only: `if self.logger is not "
        "None:` where the logger is `Logger() if rank == 0 else None` or handed to the constructor "
        "only in the rank-0 branch of this file or of a project file that imports it), after an early exit (`if rank != 0: return`), in a function every "
        "call of which is so guarded (a method this file never calls: every call of it in the project files that import "
        "it, up to five imports up, such as a subclass's `self._save_checkpoint(...)` under `if local_rank == 0:`), "
        "or in the process that calls `mp.spawn`; so is a save to a "
        'path that names the rank (`f"model_rank{rank}.pt"`, one file per rank) and a save into an '
        "in-memory buffer (`io.BytesIO()`)."
    )
    fix = "safe"
    fix_notes = (
        "The fix puts the statement under `if not dist.is_initialized() or dist.get_rank() == 0:` "
        "(just `dist.get_rank() == 0` in the distributed branch): no collective is added, so it cannot "
        "hang ranks that never reach it, and a single-process run still saves. It is unsafe when code "
        "after the save in the same function reads the file back or names its path (a `torch.load`, "
        "`shutil.copyfile(filename, ...)`): the other ranks would then use the file without waiting "
        "for rank 0 to finish it."
    )
    false_positives = (
        "A function of a module (not a method) whose callers in another module run it on one rank only; a path made "
        "per rank in another module."
    )
    valid = (
        """\
import torch
import torch.distributed as dist

if dist.get_rank() == 0:
    torch.save(model.state_dict(), "model.pt")
""",
        """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def save_checkpoint(state, filename="checkpoint.pth.tar"):
    torch.save(state, filename)  # every call of this helper is under a once-per-node guard


def main_worker(gpu, ngpus_per_node, args):
    args.rank = args.rank * ngpus_per_node + gpu
    if not args.multiprocessing_distributed or args.rank % ngpus_per_node == 0:
        save_checkpoint({"epoch": 1})


if __name__ == "__main__":
    mp.spawn(main_worker, nprocs=2, args=(2, args))
""",
        """\
import torch
import torch.distributed as dist


def checkpoint(model, rank):
    if rank != 0:
        return
    torch.save(model.state_dict(), "model.pt")
""",
        """\
import os
import torch
import torch.distributed as dist

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    master_process = int(os.environ["RANK"]) == 0
else:
    master_process = True
if master_process:
    torch.save(model.state_dict(), "ckpt.pt")
""",
        """\
import torch
import torch.distributed as dist

torch.save(model.state_dict(), f"model_rank{dist.get_rank()}.pt")  # a file per rank
""",
        """\
import io
import torch
import torch.distributed as dist

buffer = io.BytesIO()
torch.save(model.state_dict(), buffer)  # into memory, then broadcast: no file
""",
        """\
import os
import torch
import torch.distributed as dist


class FixMatch:
    def train(self, args):
        for it in range(args.iterations):
            self.step()
            if args.rank == 0:
                self.save_model("latest.pth", args.save_dir)

    def save_model(self, name, folder):
        self.model.eval()
        state = self.model.state_dict()
        self.model.train()  # nn.Module.train(): FixMatch.train needs args, so this call is not it
        torch.save(state, os.path.join(folder, name))
""",
    )
    invalid = (
        Invalid(
            """\
import torch
import torch.distributed as dist

torch.save(model.module.state_dict(), "model.pt")
""",
            """\
import torch
import torch.distributed as dist

if not dist.is_initialized() or dist.get_rank() == 0:
    torch.save(model.module.state_dict(), "model.pt")
""",
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist


def save(model):
    torch.save(model.state_dict(), "model.pt")


if dist.get_rank() == 0:
    save(model)
save(model)  # this call is on every rank
""",
            """\
import torch
import torch.distributed as dist


def save(model):
    if not dist.is_initialized() or dist.get_rank() == 0:
        torch.save(model.state_dict(), "model.pt")


if dist.get_rank() == 0:
    save(model)
save(model)  # this call is on every rank
""",
        ),
        Invalid(
            """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model)
torch.save(model.module.state_dict(), "model.pt")
""",
            """\
import torch
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model)
if not torch.distributed.is_initialized() or torch.distributed.get_rank() == 0:
    torch.save(model.module.state_dict(), "model.pt")
""",
        ),
    )

    def visit_Call(self, node: cst.Call) -> None:
        if not self.qualified(node) & names.TORCH_SAVE:
            return
        context = self.file.analysis.context
        if not context.every_rank(node) or per_rank_path(self, node):  # f"model_rank{rank}.pt": a file per rank
            return
        destination = save_destination(node)
        if destination is None or is_buffer(self, destination):
            return  # torch.save(state, io.BytesIO()): memory, no file
        guard = fixes.rank_zero_guard(self.file, node, self.parent)
        if guard is None:
            self.report(node)
            return
        line, build, imports = guard
        self.report(node, replacement=build, target=line, imports=imports, safety=self._safety(node, line, destination))

    def _safety(self, node: cst.Call, line: cst.SimpleStatementLine, destination: cst.BaseExpression) -> Fixability:
        """Unsafe when something after the save in its function reads the file back or names its
        path (``shutil.copyfile(filename, ...)``): the other ranks would no longer wait for it."""
        source = self.file.analysis.source
        scope = source.enclosing_function(node) or self.file.module
        after = source.line(line)
        path = code(destination)
        for statement in source.of_types_in(scope, cst.SimpleStatementLine):
            if source.line(statement) <= after:
                continue
            if path in code(statement) or any(self.qualified(c) & names.TORCH_LOAD for c in of_types(statement, cst.Call)):
                return "unsafe"
        return "safe"
