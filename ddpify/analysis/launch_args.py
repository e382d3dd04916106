"""The ``--local_rank`` option, wherever the project declares it: ``torch.distributed.launch``
passed it once (``--local-rank`` since torch 2), ``torchrun`` passes ``LOCAL_RANK`` in the
environment instead, so an option that only reads the command line keeps its default there.
A script often declares it in a helper of its project (``gpu.add_gpu_params(parser)``, an
``Options`` class in ``src/options.py``); the summaries of those modules say so."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.module_facts import Called, through_calls
from ddpify.analysis.source import Source
from ddpify.tree.cstutil import code, is_method_call

LOCAL_RANK_FLAGS = ("--local_rank", "--local-rank")


def local_rank_flags(call: cst.Call) -> list[str]:
    """The spellings of ``--local_rank`` an ``add_argument(...)`` call declares."""
    if not is_method_call(call, "add_argument"):
        return []
    return [
        a.value.evaluated_value
        for a in call.args
        if a.keyword is None and isinstance(a.value, cst.SimpleString) and a.value.evaluated_value in LOCAL_RANK_FLAGS
    ]


def works_under_torchrun(call: cst.Call) -> bool:
    """Both launchers are served: torch 2's ``--local-rank`` spelling, and ``LOCAL_RANK`` from
    the environment as the default."""
    default = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "default"), None)
    return "--local-rank" in local_rank_flags(call) and default is not None and "LOCAL_RANK" in code(default)


def local_rank_declarers(source: Source) -> set[str]:
    """The module's top-level functions, and its classes (as ``Class.__init__``), that declare
    a ``--local_rank`` option torchrun leaves at its default, themselves or through the
    module's functions and project helpers they call (``merge_config()`` -> ``get_args()``)."""
    found: set[str] = set()
    direct: set[cst.FunctionDef] = set()
    for call in source.calls_by_callee.get("add_argument", []):
        if not local_rank_flags(call) or works_under_torchrun(call):
            continue
        function = source.enclosing_function(call)
        owner = source.enclosing_class(call)
        if owner is not None and source.enclosing_class(owner) is None and source.enclosing_function(owner) is None:
            found.add(f"{owner.name.value}.__init__")
        elif function is not None:
            direct.add(function)
    tops = [f for fs in source.functions.values() for f in fs if source.enclosing_function(f) is None and source.enclosing_class(f) is None]

    def declares(function: cst.FunctionDef, called: Called[bool]) -> bool | None:
        calls = source.of_types_in(function.body, cst.Call)
        return True if function in direct or any(called(c) for c in calls) else None

    return found | {f.name.value for f in through_calls(source, tops, declares, lambda helper: helper.declares_local_rank or None)}


def from_local_rank_variable(source: Source, value: cst.BaseExpression) -> bool:
    """``value`` reads the LOCAL_RANK environment variable: ``int(os.environ["LOCAL_RANK"])``,
    or a name the same function set so (``local_rank = int(os.environ.get("LOCAL_RANK", "0"))``
    then ``args.local_rank = local_rank``)."""
    if "LOCAL_RANK" in code(value):
        return True
    if not isinstance(value, cst.Name):
        return False
    function = source.enclosing_function(value)
    assigned = [v for s, v in source.assignments.get(value.value, []) if source.enclosing_function(s) is function]
    return bool(assigned) and all(v is not None and "LOCAL_RANK" in code(v) for v in assigned)


def local_rank_replacers(source: Source) -> set[str]:
    """The module's top-level functions that set a ``.local_rank`` from the environment
    (``args.local_rank = int(os.environ.get("LOCAL_RANK", 0))`` in rq-vae's ``dist.initialize``),
    themselves or through the module's functions and project helpers they call: after such a
    call, a ``--local_rank`` option holds torchrun's value."""
    tops = [f for fs in source.functions.values() for f in fs if source.enclosing_function(f) is None and source.enclosing_class(f) is None]

    def replaces(function: cst.FunctionDef, called: Called[bool]) -> bool | None:
        for assign in source.of_types_in(function.body, cst.Assign):
            assert isinstance(assign, cst.Assign)
            if any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "local_rank" for t in assign.targets):
                if from_local_rank_variable(source, assign.value):
                    return True
        return True if any(called(c) for c in source.of_types_in(function.body, cst.Call)) else None

    return {f.name.value for f in through_calls(source, tops, replaces, lambda helper: helper.replaces_local_rank or None)}
