from __future__ import annotations

import libcst as cst

from ddpify.analysis.context import is_main_guard
from ddpify.check.calls import dist_function, every_call
from ddpify.check.places import in_function
from ddpify.check.rule import Invalid, Rule
from ddpify.check.script import uses_runtime_setup
from ddpify.tree.cstutil import callee_name


class MissingDestroyProcessGroup(Rule):
    code = "DDP030"
    opt_in = "At process exit the only effect is PyTorch's warning: noise on real scripts."
    name = "missing-destroy-process-group"
    message = "init_process_group without destroy_process_group: the process group is never torn down"
    severity = "note"
    why = (
        "A process group holds communicator resources (NCCL communicators, sockets, the store "
        "connection). Left for interpreter shutdown to clean up, they are destroyed in no particular "
        "order, which can hang or crash at exit; since PyTorch 2.4, exiting without "
        "`destroy_process_group()` prints a warning that resources may leak (pytorch/pytorch#126275, "
        "PR #122358 documents the call). Call `dist.destroy_process_group()` at the end of the worker, "
        "ideally in a `finally:`, or let `with ddpify.distributed():` (or `ddpify.setup()`, which "
        "registers the teardown at exit) do it. Only scripts are checked (a main guard, or "
        "the init at module level): a library module's `init_distributed()` helper leaves the "
        "teardown to its caller."
    )
    fix_notes = "No automatic fix."
    false_positives = "At process exit the only effect is PyTorch's warning: mostly noise on real scripts."
    valid = (
        """\
import torch.distributed as dist


def main():
    dist.init_process_group("nccl")
    try:
        train()
    finally:
        dist.destroy_process_group()
""",
        """\
import ddpify.runtime as ddpify

if __name__ == "__main__":
    with ddpify.distributed():
        main()
""",
    )
    invalid = (
        Invalid(
            """\
import torch.distributed as dist


def main():
    dist.init_process_group(backend="nccl")
    train()


if __name__ == "__main__":
    main()
"""
        ),
    )

    def visit_Module(self, node: cst.Module) -> None:
        inits = [c for c in every_call(node) if dist_function(self, c) == "init_process_group"]
        if not inits or uses_runtime_setup(self, node):
            return
        if any(callee_name(c) == "destroy_process_group" for c in every_call(node)):
            return
        if not any(is_main_guard(s) for s in node.body) and all(in_function(self, c) for c in inits):
            return  # a library module's helper: its caller owns the group's lifetime
        for call in inits:
            self.report(call)
