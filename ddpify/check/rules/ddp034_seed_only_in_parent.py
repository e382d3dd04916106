from __future__ import annotations

import libcst as cst

from ddpify.analysis.context import Process
from ddpify.analysis.source import Source
from ddpify.check.rule import Invalid, Rule, short
from ddpify.check.seeds import SeedCall, seeds


class SeedOnlyInParent(Rule):
    code = "DDP034"
    default = True
    name = "seed-only-in-parent"
    message = "the RNG is seeded in the process that calls mp.spawn, not in the workers: training is not seeded"
    severity = "warning"
    why = (
        "`mp.spawn` starts every worker as a fresh Python interpreter (the spawn start method), so "
        "RNG state set in the launching process is not inherited: a `torch.manual_seed(args.seed)` "
        "before `mp.spawn(main_worker, ...)` seeds nothing that trains, and `--seed` silently does "
        "nothing (runs are not reproducible). Seed at the top of the worker function instead "
        "(`torch.manual_seed(args.seed + rank)` after the models are built, or the same seed before). "
        "Reported: a seed call that runs in the launching process of a script whose workers seed no "
        "RNG of that kind; a call of a helper of the project's own modules that seeds (ml-cvnets' "
        '`device_setup(opts)`, seeding from `getattr(opts, "common.seed")`) counts as its seed calls, '
        "and so do the libraries' seed-everything helpers (`torch_geometric.seed_everything`, "
        "`transformers.set_seed`, Lightning's `seed_everything`). The launching process is also the one "
        "that calls a launch helper of the project handing the worker to `mp.spawn` (detectron2-style "
        "`launch(main_worker, ...)`, whose `mp.spawn(_distributed_worker, args=(main_func, ...))` calls it)."
    )
    fix_notes = "No automatic fix: where in the worker to seed (before or after building the models) is the script's choice."
    false_positives = "Workers seeded by code the analysis cannot read (an installed package, a module more than three imports away)."
    valid = (
        """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def main_worker(gpu, args):
    torch.manual_seed(args.seed)
    train(gpu, args)


if __name__ == "__main__":
    mp.spawn(main_worker, args=(args,), nprocs=4)
""",
        """\
import torch
import torch.distributed as dist

torch.manual_seed(0)  # torchrun: every rank runs this line itself
dist.init_process_group("nccl")
""",
    )
    invalid = (
        Invalid(
            """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def main_worker(gpu, args):
    dist.init_process_group("nccl", init_method=args.dist_url, rank=args.rank + gpu, world_size=args.world_size)
    train(gpu, args)


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    mp.spawn(main_worker, args=(args,), nprocs=4)


if __name__ == "__main__":
    main()
"""
        ),
    )

    def visit_Module(self, node: cst.Module) -> None:
        source = self.file.analysis.source
        if not source.spawned:
            return
        context = self.file.analysis.context
        calls = [*seeds(self).calls, *self._helper_seeds(source)]
        in_workers = {s.family for s in calls if context.process(s.call) is Process.WORKER}
        for seed in calls:
            if seed.family in in_workers or context.process(seed.call) is not Process.PARENT:
                continue
            self.report(
                seed.call,
                f"{short(seed.call)} runs in the process that calls mp.spawn: the workers start fresh interpreters and "
                "are never seeded; seed in the worker function",
            )

    def _helper_seeds(self, source: Source) -> list[SeedCall]:
        """Calls of the project's helpers that seed the global RNGs (``Helper.seeds``:
        ml-cvnets' ``device_setup(opts)`` seeding random, torch and numpy), once per family."""
        found: list[SeedCall] = []
        for call in source.of_types(cst.Call):
            helper = source.project.helper(call)
            if helper is not None and helper.seeds is not None:
                found.extend(SeedCall(call, family, source.line(call)) for family in sorted(helper.seeds.families))
        return found
