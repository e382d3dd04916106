from __future__ import annotations

import libcst as cst

from ddpify.analysis.output import open_mode
from ddpify.check.rule import Invalid, Rule, short
from ddpify.check.script import is_data_parallel
from ddpify.check.writes import per_rank_path
from ddpify.convert import names
from ddpify.convert.writes import REMOVED_PATH, WRITERS
from ddpify.tree.cstutil import is_name, keyword_value, of_types

_TEMPORARY = names.TEMP_DIRECTORIES | names.TEMP_FILES
_COPIES = frozenset(writer for writer in WRITERS if writer.startswith("shutil.copy"))


class WriteOnEveryRank(Rule):
    code = "DDP037"
    default = False
    opt_in = (
        "Measured by an independent judge on unseen DDP repositories (ddp21n/l/m at eaa5380): right on 3 of 4 findings "
        "in the files ddpify is tuned on and on 1 of 3 in the held-out files, under the 0.9 precision a default rule needs."
    )
    name = "write-on-every-rank"
    message = "a file is written, created or removed on every rank at once"
    severity = "warning"
    why = (
        "Every process runs the script, so set-up and logging code that touches one path runs N times at "
        "once: `open(p, 'w')` (also `'a'`, `'x'`) truncates or interleaves what the other ranks write "
        "(VoiceCraft's `args.pkl`, a log every rank opens), `os.mkdir(d)` / `os.makedirs(d)` without "
        "`exist_ok=True` fails with FileExistsError on every rank but the first (the `if not os.path.exists(d): "
        "os.mkdir(d)` idiom races too), `shutil.copytree` (without `dirs_exist_ok=True`) and `shutil.copyfile` copy onto one "
        "path at once, and `os.remove`, `shutil.rmtree`, `shutil.move`, `os.rename` fail with "
        "FileNotFoundError on every rank but the first, or pull a folder from under a rank that is still "
        "creating it. Checkpoints are DDP005's. Not reported: code under a rank test (here or at every call "
        "site, also through the project's rank helpers), in the process that calls `mp.spawn`, a path that names "
        "the rank (one file per rank), a temporary file or folder each process makes for itself, a removal in a "
        "`try` block or with `ignore_errors=True`, a file opened for reading."
    )
    fix = None
    fix_notes = (
        "No fix: whether the other ranks read the file afterwards (then they must wait for rank 0 at a barrier) "
        "or need the folder themselves decides the right guard. Write on rank 0 (`if dist.get_rank() == 0:`), "
        "create folders with `exist_ok=True`, remove on rank 0 after a barrier."
    )
    false_positives = (
        "`if not os.path.exists(d): os.makedirs(d)` of a folder rank 0 created earlier, before code that makes the other "
        "ranks arrive late (a race only in principle); a file each rank appends one line to on purpose; a path "
        "made per rank in another module; code that only one rank reaches for a reason the linter cannot see "
        "(a launcher that starts the script once per node)."
    )
    valid = (
        """\
import os
import torch.distributed as dist

dist.init_process_group("nccl")
if dist.get_rank() == 0:
    with open("args.txt", "w") as f:
        f.write("lr=0.1")
os.makedirs("runs", exist_ok=True)
""",
        """\
import os
import tempfile
import torch.distributed as dist

dist.init_process_group("nccl")
log = open(f"log_rank{dist.get_rank()}.txt", "a")  # a file per rank
scratch = tempfile.mkdtemp()
os.mkdir(os.path.join(scratch, "cache"))  # this process's own temporary folder
try:
    os.remove("stale.lock")
except FileNotFoundError:
    pass
config = open("config.yaml").read()  # reading
""",
    )
    invalid = (
        Invalid(
            """\
import pickle
import torch.distributed as dist

dist.init_process_group("nccl")
with open("exp/args.pkl", "wb") as f:  # every rank truncates the file the others write
    pickle.dump(args, f)
"""
        ),
        Invalid(
            """\
import os
import torch.distributed as dist

dist.init_process_group("nccl")
if not os.path.exists(args.output_dir):
    os.mkdir(args.output_dir)  # FileExistsError on the slower rank
"""
        ),
        Invalid(
            """\
import os
import shutil
from torch.nn.parallel import DistributedDataParallel as DDP

model = DDP(model)
if not args.resume:
    shutil.rmtree(save_dir, ignore_errors=False)
"""
        ),
    )

    def __init__(self, file) -> None:
        super().__init__(file)
        self._active = False

    def visit_Module(self, node: cst.Module) -> None:
        self._active = is_data_parallel(self, node)

    def visit_Call(self, node: cst.Call) -> None:
        if not self._active:
            return
        what = self._touches(node)
        if what is None:
            return
        if not self.file.analysis.context.every_rank(node) or per_rank_path(self, node) or self._temporary(node):
            return
        self.report(node, message=f"{short(node.func)}(...) runs on every rank at once: {what}")

    def _touches(self, call: cst.Call) -> str | None:
        """What goes wrong when every rank makes ``call`` on one path (``open(p, 'w')``,
        ``os.makedirs(d)``, ``shutil.rmtree(d)``), or None."""
        qualified = self.qualified(call)
        if "builtins.open" in qualified:
            mode = open_mode(call)
            writes = isinstance(mode, str) and set(mode) & set("wax") and "+" not in mode
            return f"opened with {mode!r}, the ranks truncate or interleave one file; write it on rank 0" if writes else None
        if qualified & names.MAKE_DIRECTORY:
            exist_ok = keyword_value(call, "exist_ok")
            if exist_ok is not None and not is_name(exist_ok, "False"):
                return None
            return "all but the first rank to create the folder fail with FileExistsError; use os.makedirs(..., exist_ok=True)"
        if qualified & _COPIES:
            exist_ok = keyword_value(call, "dirs_exist_ok")
            if exist_ok is not None and not is_name(exist_ok, "False"):
                return None
            return "the ranks copy onto one path at once (copytree: all but the first fail with FileExistsError); copy on rank 0"
        if not qualified & REMOVED_PATH.keys() or self._tolerated(call):
            return None
        return "all but the first rank fail with FileNotFoundError, or remove what another rank just made; do it on rank 0"

    def _tolerated(self, call: cst.Call) -> bool:
        """A removal that may find nothing: ``ignore_errors=True``, or inside a ``try`` block."""
        ignore = keyword_value(call, "ignore_errors")
        if ignore is not None and not is_name(ignore, "False"):
            return True
        return any(isinstance(a, cst.Try) for a in self.ancestors(call))

    def _temporary(self, call: cst.Call) -> bool:
        """A path in a temporary folder or file this process made (``tempfile.mkdtemp()``)."""
        source = self.file.analysis.source
        for name in of_types(call, cst.Name):
            for _, value in source.assignments.get(name.value, []):
                if value is not None and any(self.qualified(c) & _TEMPORARY for c in of_types(value, cst.Call)):
                    return True
        return any(self.qualified(c) & _TEMPORARY for c in of_types(call, cst.Call))
