from __future__ import annotations

import libcst as cst

from ddpify.analysis.context import is_main_guard
from ddpify.check.calls import COLLECTIVES, dist_function, every_call
from ddpify.check.places import in_function
from ddpify.check.rule import Invalid, Rule
from ddpify.check.script import initialises_process_group

# torch.distributed calls that need the default process group, and their ddpify.runtime
# equivalents (which answer rank 0 / world 1 / no-op in a single process).
_NEEDS_GROUP = frozenset({"get_rank", "get_world_size", "get_backend", "new_group", *COLLECTIVES})
_RUNTIME_EQUIVALENT = {
    "get_rank": "ddpify.rank()",
    "get_world_size": "ddpify.world_size()",
    "barrier": "ddpify.barrier()",
}


class DistWithoutProcessGroup(Rule):
    code = "DDP022"
    opt_in = (
        "Files whose functions another module calls after creating the process group look exactly like the mistake from inside the file."
    )
    name = "dist-without-process-group"
    message = (
        "torch.distributed call in a script that never initialises a process group: it raises "
        "'Default process group has not been initialized' when run as a single process"
    )
    severity = "error"
    why = (
        "`dist.get_rank()`, `dist.get_world_size()`, `dist.barrier()` and every collective need the "
        "default process group. A script that calls them but never calls `init_process_group` (nor "
        "`ddpify.setup()` / `with ddpify.distributed():`) and never checks `dist.is_initialized()` "
        "crashes with ValueError as soon as it runs as one process — `python train.py`, a debugger, a "
        "notebook, CI on a CPU box (KellerJordan/Muon#24, VectorSpaceLab/OmniGen#71). Use the runtime "
        "helpers, which work with and without a launcher: `ddpify.rank()`, `ddpify.world_size()`, "
        "`ddpify.barrier()`; or guard the call with `dist.is_initialized()`. Files without a main "
        "guard are checked only for calls at module level, since a library module's functions may "
        "run after its importer set the group up."
    )
    fix_notes = "No automatic fix."
    false_positives = "A process group created by code of another module that calls this file's functions."
    valid = (
        """\
import torch.distributed as dist

if __name__ == "__main__":
    dist.init_process_group("nccl")
    print(dist.get_rank(), dist.get_world_size())
    dist.destroy_process_group()
""",
        """\
import ddpify.runtime as ddpify

if __name__ == "__main__":
    with ddpify.distributed():
        ddpify.print(ddpify.rank(), ddpify.world_size())
""",
        """\
import torch.distributed as dist


def get_rank():
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist


def main():
    if dist.get_rank() == 0:
        print("world size", dist.get_world_size())
    dist.barrier()


if __name__ == "__main__":
    main()
"""
        ),
    )

    def visit_Module(self, node: cst.Module) -> None:
        if initialises_process_group(self, node):
            return
        found = [(call, dist_function(self, call)) for call in every_call(node)]
        if any(function in ("is_initialized", "is_torchelastic_launched") for _, function in found):
            return
        script = any(is_main_guard(s) for s in node.body)
        for call, function in found:
            if function not in _NEEDS_GROUP or not (script or not in_function(self, call)):
                continue
            instead = _RUNTIME_EQUIVALENT.get(function)
            advice = f"use {instead}, which also works in a single process" if instead else "guard it with dist.is_initialized()"
            self.report(
                call, f"dist.{function}() but the script never initialises a process group: it raises in a single-process run; {advice}"
            )
