from __future__ import annotations

import libcst as cst

from ddpify.check.calls import every_call
from ddpify.check.places import in_function
from ddpify.check.rule import Invalid, Rule
from ddpify.tree.cstutil import of_types

_SPAWN = frozenset(
    {
        "torch.multiprocessing.spawn",
        "torch.multiprocessing.spawn.spawn",
        "torch.multiprocessing.start_processes",
        "torch.multiprocessing.spawn.start_processes",
    }
)


class SpawnOutsideMainGuard(Rule):
    code = "DDP029"
    opt_in = (
        "The mistake raises at start-up (a RuntimeError from the spawned interpreter), so users meet it "
        "before a linter would help; kept for `--select DDP`."
    )
    name = "spawn-outside-main-guard"
    message = 'mp.spawn runs at import time, outside `if __name__ == "__main__":`: every child re-runs it'
    severity = "error"
    why = (
        "`torch.multiprocessing.spawn` starts its workers with the 'spawn' start method: each child "
        'imports the main module afresh. Module-level code without an `if __name__ == "__main__":` '
        "guard therefore runs again in every child, which tries to spawn again and fails with "
        "'An attempt has been made to start a new process before the current process has finished "
        "its bootstrapping phase' (Lightning-AI/pytorch-lightning#16900). Put the spawn — or the call "
        "of the function that spawns — under the main guard, or launch with `torchrun` instead. "
        "Reported: a spawn at module level, and a module-level call of a function that (directly or "
        "through other functions of the file) spawns."
    )
    fix_notes = "No automatic fix."
    false_positives = "None known."
    valid = (
        """\
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


if __name__ == "__main__":
    mp.spawn(worker, args=(2,), nprocs=2)
""",
        """\
import torch.distributed as dist
import torch.multiprocessing as mp


def main():
    mp.spawn(worker, nprocs=2)


if __name__ == "__main__":
    main()
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank):
    dist.init_process_group("gloo", rank=rank, world_size=2)


mp.spawn(worker, nprocs=2)
"""
        ),
        Invalid(
            """\
import torch
import torch.distributed as dist


def main():
    torch.multiprocessing.spawn(worker, nprocs=torch.cuda.device_count())


main()
"""
        ),
    )

    def visit_Module(self, node: cst.Module) -> None:
        spawns = [c for c in every_call(node) if self.qualified(c) & _SPAWN]
        if not spawns:
            return
        functions = [f for f in node.body if isinstance(f, cst.FunctionDef)]
        spawning: set[str] = set()
        for call in spawns:
            if in_function(self, call):
                owner = self._top_function(call)
                if owner is not None:
                    spawning.add(owner)
            elif not self.file.analysis.context.under_main_guard(call):
                self.report(call)
        changed = True
        while changed:  # functions that call a spawning function spawn too
            changed = False
            for function in functions:
                if function.name.value in spawning:
                    continue
                called = {c.func.value for c in of_types(function.body, cst.Call) if isinstance(c.func, cst.Name)}
                if called & spawning:
                    spawning.add(function.name.value)
                    changed = True
        for call in every_call(node):
            if (
                isinstance(call.func, cst.Name)
                and call.func.value in spawning
                and not in_function(self, call)
                and not self.file.analysis.context.under_main_guard(call)
                and not any(isinstance(a, cst.ClassDef) for a in self.ancestors(call))
            ):
                self.report(
                    call,
                    f'{call.func.value}() spawns processes (mp.spawn) and is called at import time, outside `if __name__ == "__main__":`: every child re-runs it',
                )

    def _top_function(self, call: cst.Call) -> str | None:
        owner = None
        for ancestor in self.ancestors(call):
            if isinstance(ancestor, cst.FunctionDef):
                owner = ancestor
        return owner.name.value if owner is not None and self.parent(owner) is self.file.module else None
