"""Code that takes part in a process group, also through the project's helpers.

A function is *distributed* when it calls into ``torch.distributed`` (``init_process_group``,
``get_rank``, ``barrier``), wraps a model in ``DistributedDataParallel`` or builds a
``DistributedSampler`` -- itself, through a function of its own module, or through a helper of
its project (each function answered once, ``ddpify.analysis.module_facts``). A class is
distributed when one of its methods is. A function *joins* the group when it initialises it, and
*sets the device* when it calls ``torch.cuda.set_device`` (``Helper.sets_device``). Many DDP projects keep all of that in a helper module
(``init_dist(args.launcher)``, ``opt['rank'], opt['world_size'] = get_dist_info()``), so the
training script itself never imports ``torch.distributed``; such a file is still a DDP script
and the linter checks it (``ddpify.check.scope``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.module_facts import through_calls
from ddpify.analysis.source import started
from ddpify.tree.cstutil import is_simple_reference, keyword_value

if TYPE_CHECKING:
    from ddpify.analysis.project import Helper
    from ddpify.analysis.source import Source

# What sets the current GPU: set, or as a context (`with torch.cuda.device(local_rank):`).
SET_DEVICE = frozenset(
    {"torch.cuda.set_device", "torch.cuda.device", "torch.accelerator.set_device_index", "torch.accelerator.set_device_idx"}
)
_DIST = "torch.distributed"
_DISTRIBUTED_CLASSES = frozenset({"DistributedDataParallel", "DistributedSampler"})


def names_distributed(qualified: set[str]) -> bool:
    """A qualified name of ``torch.distributed`` or of DDP / the distributed sampler."""
    return any(n == _DIST or n.startswith(_DIST + ".") or n.rsplit(".", 1)[-1] in _DISTRIBUTED_CLASSES for n in qualified)


def distributed_functions(source: Source, functions: list[cst.FunctionDef]) -> set[cst.FunctionDef]:
    """Those of ``functions`` that are distributed."""
    return _calling(source, functions, lambda call: names_distributed(source.qualified(call)), is_distributed_helper)


def joining_functions(source: Source, functions: list[cst.FunctionDef]) -> set[cst.FunctionDef]:
    """Those of ``functions`` that join the process group (``init_process_group``), themselves
    or through what they call, or through the workers they start (VQ-Diffusion's
    ``launch(fn, ...)`` spawning its ``distributed_worker``, which joins, then runs ``fn``)."""
    joining = _calling(source, functions, lambda call: _joins(source, call), lambda helper: helper.joins_group)
    starts = {c for c in source.process_starts if any(f in joining for name in started(c) for f in source.functions.get(name, []))}
    if not starts:
        return joining
    return _calling(source, functions, lambda call: call in starts or _joins(source, call), lambda helper: helper.joins_group)


def device_setting_functions(source: Source, functions: list[cst.FunctionDef]) -> set[cst.FunctionDef]:
    """Those of ``functions`` that set the current GPU (``torch.cuda.set_device(local_rank)``),
    themselves or through what they call (a project's ``setup_ddp(rank)``)."""
    return _calling(source, functions, lambda call: bool(source.qualified(call) & SET_DEVICE), lambda helper: helper.sets_device)


def joining_calls(source: Source) -> list[cst.Call]:
    """The calls of the file that join the process group: ``dist.init_process_group(...)``, a
    function of the file or a helper of its project that does (``init_dist(args.launcher)``)."""
    every = [f for fs in source.functions.values() for f in fs]
    joining = joining_functions(source, every)
    found = []
    for call in source.of_types(cst.Call):
        if _joins(source, call) or set(source.functions_called(call)) & joining:
            found.append(call)
            continue
        helper = source.project.helper(call) if is_simple_reference(call.func) else None
        if helper is not None and helper.joins_group:
            found.append(call)
    return found


def joining_branches(source: Source) -> dict[cst.CSTNode, bool]:
    """The ``if``/``else`` statements that join the process group in one branch only: True
    where the body joins, False where the ``else`` does. The other branch is the single-process
    run, whatever the test reads (a launcher name, a config key); ``ddpify.analysis.context``
    leaves the joining one as it was (its statements before the join run before the group
    exists). Found from the joining calls up, so the cost is their depth, not the file's ifs."""
    sides: dict[cst.CSTNode, set[bool]] = {}
    for call in joining_calls(source):
        child: cst.CSTNode = call
        for parent in source.ancestors(call):
            if isinstance(parent, cst.If) and parent.orelse is not None and (child is parent.body or child is parent.orelse):
                sides.setdefault(parent, set()).add(child is parent.body)
            if isinstance(parent, cst.FunctionDef):
                break
            child = parent
    return {statement: next(iter(found)) for statement, found in sides.items() if len(found) == 1}


def _joins(source: Source, call: cst.Call) -> bool:
    return any(n.rsplit(".", 1)[-1] == "init_process_group" and n.startswith(_DIST) for n in source.qualified(call))


def _calling(
    source: Source, functions: list[cst.FunctionDef], of_call: Callable[[cst.Call], bool], of_helper: Callable[[Helper], bool]
) -> set[cst.FunctionDef]:
    """Those of ``functions`` with a call that ``of_call`` accepts, directly, through a function
    of the module or through a project helper ``of_helper`` accepts (each function once)."""

    def answer(function: cst.FunctionDef, called: Callable[[cst.Call], bool | None]) -> bool | None:
        return True if any(called(c) for c in source.of_types_in(function, cst.Call)) else None

    return set(
        through_calls(
            source,
            functions,
            answer,
            lambda helper: True if of_helper(helper) else None,
            lambda call: True if of_call(call) else None,
        )
    )


def distributed_classes(source: Source, functions: set[cst.FunctionDef]) -> set[str]:
    """The module-level classes with a method among the distributed ``functions``."""
    found = set()
    for function in functions:
        owner = source.enclosing_class(function)
        if owner is not None and source.enclosing_function(owner) is None and source.enclosing_class(owner) is None:
            found.add(owner.name.value)
    return found


def is_distributed_helper(helper: Helper) -> bool:
    """A project helper only a DDP program calls: it joins or uses the process group, tests or
    returns the rank, silences ``print`` on the other ranks or starts the worker processes."""
    return helper.distributed or helper.flag is not None or helper.number is not None or helper.silences_print or helper.spawns is not None


def calls_distributed_helpers(source: Source) -> bool:
    """Whether the file calls a function or builds a class of its project that is distributed."""
    for call in source.of_types(cst.Call):
        helper = source.project_call(call)
        if helper is not None and is_distributed_helper(helper):
            return True
    return False


# What a file that takes part in a distributed run mentions somewhere: its launch, its process
# group, its rank. A file without any of it (an evaluation script run as one process) runs alone.
_DISTRIBUTED_WORDS = re.compile(
    r"distributed|init_process_group|\bdist[._]|local_rank|world_size|\bspawn\(|accelerate|deepspeed|horovod|\bddp\b|\brank\b",
    re.IGNORECASE,
)


def mentions_distribution(text: str) -> bool:
    """Whether the source ``text`` mentions anything of a distributed run (see above)."""
    return _DISTRIBUTED_WORDS.search(text) is not None


def uses_torch_distributed(text: str) -> bool:
    """Whether the source ``text`` uses PyTorch's distributed package or DDP itself: a file of a
    distributed run for sure (a single-GPU module being converted does not)."""
    return "torch.distributed" in text or "DistributedDataParallel" in text


def spawned_parameter(source: Source, function: cst.FunctionDef) -> int | None:
    """The index of the parameter ``function`` hands to ``mp.spawn`` as the worker, if any:
    started itself, or handed in ``args=`` to a worker of the module that calls it (detectron2's
    ``launch(main_func, ...)``: ``mp.spawn(_distributed_worker, args=(main_func, ...))``)."""
    names = [p.name.value for p in function.params.params]
    for call in source.process_starts:
        if source.enclosing_function(call) is not function:
            continue
        for target in started(call):
            if target in names:
                return names.index(target)
            handed = keyword_value(call, "args")
            workers = [f for f in source.functions.get(target, []) if source.enclosing_function(f) is None]
            if not isinstance(handed, cst.Tuple) or len(workers) != 1:
                continue
            worker_params = [p.name.value for p in workers[0].params.params]
            called = {
                c.func.value for c in source.of_types_in(workers[0], cst.Call) if isinstance(c, cst.Call) and isinstance(c.func, cst.Name)
            }
            for position, element in enumerate(handed.elements):
                value = element.value
                inner = position + 1  # spawn hands the process index first
                if isinstance(value, cst.Name) and value.value in names and inner < len(worker_params) and worker_params[inner] in called:
                    return names.index(value.value)
    return None
