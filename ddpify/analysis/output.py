"""Whether a print, log line or file write reaches the console or disk from every rank as it
should: ``print`` replaced for the other ranks (``setup_for_distributed(is_master)``,
``builtins.print = ...``, a project helper that does it), output that names its rank, a file
per rank. Where the code runs is the context's (``ddpify.analysis.context``); this is what
the output there means."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import libcst as cst

from ddpify.analysis.context import Context
from ddpify.analysis.module_facts import through_calls
from ddpify.analysis.ranks import MAIN, REST, SOLO, constant
from ddpify.analysis.reads import MUTATORS
from ddpify.analysis.source import Source
from ddpify.tree import cstutil
from ddpify.tree.cstutil import is_simple_reference

# Helpers of other modules that replace ``builtins.print`` on non-main ranks (DETR, DeiT, MAE,
# DINO: ``utils.init_distributed_mode(args)`` calls ``setup_for_distributed(rank == 0)``), by
# name, for modules the project reading cannot see (installed packages, deeper imports).
_PRINT_OVERRIDE = re.compile(r"^(setup_for_distributed|init_distributed_mode|suppress_print\w*|disable_print\w*|silence_print\w*)$")
_BUILTINS = frozenset({"builtins", "__builtin__", "__builtins__"})


# Remote and interactive debuggers: the code around their attach runs only when a developer asks.
_DEBUGGERS = frozenset({"ptvsd", "debugpy", "pydevd", "pdb", "ipdb"})


class Output:
    """The output of one file's statements, computed on demand and cached."""

    def __init__(self, source: Source, context: Context) -> None:
        self.source = source
        self.context = context

    def print_silenced(self, call: cst.CSTNode) -> bool:
        """A ``print`` that runs after ``builtins.print`` was replaced for the non-main ranks
        (``setup_for_distributed(is_master)``, ``builtins.print = ...``), or inside a block that
        sends standard output elsewhere (``with HiddenPrints(local_rank):``)."""
        return any(self._after(point, direct, call) for point, direct in self._print_overrides) or self._in_redirecting_block(call)

    def stdout_redirecting_classes(self) -> set[str]:
        """This file's context-manager classes whose ``__enter__`` assigns ``sys.stdout``
        (Large-Time-Series-Model's ``HiddenPrints(rank)``: /dev/null on all ranks but one).
        Inside their ``with`` block a print is not repeated per rank, whatever the condition."""
        found = set()
        for function in self.source.functions.get("__enter__", []):
            owner = self.source.enclosing_class(function)
            assigns = self.source.of_types_in(function, cst.Assign)
            if owner is not None and any(self._assigns_stdout(a) for a in assigns if isinstance(a, cst.Assign)):
                found.add(owner.name.value)
        return found

    def _assigns_stdout(self, assign: cst.Assign) -> bool:
        return any(
            isinstance(t.target, cst.Attribute) and t.target.attr.value == "stdout" and "sys.stdout" in self.source.qualified(t.target)
            for t in assign.targets
        )

    def _in_redirecting_block(self, node: cst.CSTNode) -> bool:
        """Inside ``with X(...):`` where ``X`` sends standard output elsewhere: this file's
        class or a project helper class that does (``Helper.redirects_stdout`` of
        ``X.__init__``), or ``contextlib.redirect_stdout``."""
        for ancestor in self.source.ancestors(node):
            if not isinstance(ancestor, cst.With):
                continue
            for item in ancestor.items:
                call = item.item
                if isinstance(call, cst.Call) and self._redirects(call):
                    return True
        return False

    def _redirects(self, call: cst.Call) -> bool:
        if "contextlib.redirect_stdout" in self.source.qualified(call):
            return True
        if isinstance(call.func, cst.Name) and call.func.value in self._redirecting_here:
            return True
        helper = self.source.project.named(f"{cstutil.code(call.func)}.__init__") if is_simple_reference(call.func) else None
        return helper is not None and helper.redirects_stdout

    @functools.cached_property
    def _redirecting_here(self) -> set[str]:
        return self.stdout_redirecting_classes()

    def tagged_per_rank(self, call: cst.Call) -> bool:
        """Output that names its rank (``print(f"[GPU{rank}] ...")``, ``tqdm(desc=f"rank {rank}")``):
        one line per rank is what it means to write."""
        return any(
            self.context.rank_tests.depends_on_rank(arg.value)
            for arg in call.args
            if arg.keyword is None or arg.keyword.value in ("desc", "postfix")
        )

    def for_a_debugger(self, call: cst.Call) -> bool:
        """A line of an ``if`` that attaches a remote debugger (the Hugging Face examples' ``if
        args.server_ip and args.server_port: import ptvsd; print("Waiting for debugger attach");
        ptvsd.wait_for_attach()``): a developer's switch, off in a training run."""
        block = next((a for a in self.source.ancestors(call) if isinstance(a, cst.If)), None)
        calls = cstutil.of_types(block.body, cst.Call) if block is not None else []
        return any(cstutil.code(c.func).split(".")[0] in _DEBUGGERS for c in calls if isinstance(c, cst.Call))

    def per_rank_file(self, call: cst.Call) -> bool:
        """A write or load whose file names the rank (``f"queue{rank}.pth"``, a path variable
        computed from the rank, ``Path(d, f"result-{rank}.json").write_text(...)``): a file per
        rank, which each rank writes and reads alone, as meant."""
        if self.tagged_per_rank(call):
            return True
        parts = [arg.value for arg in call.args]
        if isinstance(call.func, cst.Attribute):
            parts.append(call.func.value)  # the path a method writes through
        for part in parts:
            if self.context.rank_tests.depends_on_rank(part):
                return True
            if is_simple_reference(part):  # path = os.path.join(d, "queue" + str(rank) + ".pth")
                assigned = self.source.assignments.get(cstutil.code(part), [])
                if assigned and all(v is not None and self.context.rank_tests.depends_on_rank(v) for _, v in assigned):
                    return True
        return False

    @functools.cached_property
    def _print_overrides(self) -> list[tuple[cst.CSTNode, bool]]:
        """Where ``print`` gets replaced, and whether in place (an assignment to
        ``builtins.print`` / ``setattr(builtins, "print", ...)``) or by a call (of this file's
        function that makes one, or of such a helper of another module)."""
        points: list[tuple[cst.CSTNode, bool]] = []
        project = self.source.project
        candidates = [
            *self.source.of_types(cst.Assign),
            *self.source.calls_by_callee.get("setattr", []),
            *self.source.calls_by_callee.get("dup2", []),
        ]
        imports = [
            node for node in self.source.of_types(cst.Import, cst.ImportFrom) if any(h.silences_print for h in project.on_import(node))
        ]
        for node in [*candidates, *imports]:
            if node in imports or self._replaces_print(node):
                points.append((node, True))
                function = self.source.enclosing_function(node)
                if function is not None:
                    points.extend((site, False) for site in self.context.call_sites(function))
        for name, calls in self.source.calls_by_callee.items():
            if name in self.source.functions:
                continue
            for call in calls:
                helper = project.helper(call)
                if helper.silences_print if helper is not None else _PRINT_OVERRIDE.match(name):
                    points.append((call, False))
        return points

    def silences_on_import(self) -> bool:
        """Importing this module replaces ``print`` for the other ranks: its module-level code
        does (``builtins.print = rank0_print``), or imports a project module that does."""
        return any(direct and self.source.enclosing_function(point) is None for point, direct in self._print_overrides)

    def print_overriding_functions(self) -> set[cst.FunctionDef]:
        """This file's module-level functions that replace ``print`` for the other ranks
        when called (themselves, or through a call of one that does)."""
        found = set()
        for point, _ in self._print_overrides:
            function = self.source.enclosing_function(point)
            if function is not None and self.source.enclosing_class(function) is None:
                found.add(function)
        return found

    def _replaces_print(self, node: cst.CSTNode) -> bool:
        """``builtins.print = ...`` / ``setattr(builtins, "print", ...)`` anywhere (the new print
        tests the rank), or standard output sent elsewhere (``sys.stdout = open(os.devnull,
        "w")``, ``os.dup2(null, sys.stdout.fileno())``) where only ranks other than the main
        one run it."""
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
            if any(isinstance(t, cst.Attribute) and t.attr.value == "print" and self._is_builtins(t.value) for t in targets):
                return True
            stdout = [t for t in targets if isinstance(t, cst.Attribute) and t.attr.value == "stdout"]
            return any("sys.stdout" in self.source.qualified(t) for t in stdout) and self._other_ranks_only(node)
        if not isinstance(node, cst.Call) or len(node.args) < 2:
            return False
        qualified = self.source.qualified(node)
        if "os.dup2" in qualified:
            target = node.args[1].value
            fileno = isinstance(target, cst.Call) and "sys.stdout.fileno" in self.source.qualified(target)
            return (constant(target) == 1 or fileno) and self._other_ranks_only(node)
        name = node.args[1].value
        if not (isinstance(name, cst.SimpleString) and name.evaluated_value in ("print", "stdout")):
            return False
        owner = self.source.qualified(node.args[0].value)
        if name.evaluated_value == "print":
            return self._is_builtins(node.args[0].value)
        return "sys" in owner and self._other_ranks_only(node)

    def _other_ranks_only(self, node: cst.CSTNode) -> bool:
        """Runs on some ranks, never on the main one nor in the single process."""
        ranks = self.context.ranks(node)
        return bool(ranks.may & REST) and not ranks.may & (SOLO | MAIN)

    def _is_builtins(self, node: cst.BaseExpression) -> bool:
        """``builtins`` / ``__builtin__`` (``import builtins as __builtin__``) / ``__builtins__``."""
        return "builtins" in self.source.qualified(node) or (isinstance(node, cst.Name) and node.value in _BUILTINS)

    def _called_after(self, point: cst.CSTNode, here: cst.FunctionDef, there: cst.FunctionDef, seen: set[cst.FunctionDef]) -> bool:
        """Whether ``there`` is called from ``here`` after ``point`` (directly, or through
        functions called there after it; each function looked at once)."""
        seen.add(there)
        for site in self.context.call_sites(there):
            caller = self.source.enclosing_function(site)
            if caller is here and self.source.line(site) > self.source.line(point):
                return True
            if caller is not None and caller is not here and caller not in seen and self._called_after(point, here, caller, seen):
                return True
        return False

    def _after(self, point: cst.CSTNode, direct: bool, node: cst.CSTNode, depth: int = 0) -> bool:
        """Whether ``node`` runs after the override at ``point``, as far as the file shows."""
        here = self.source.enclosing_function(point)
        there = self.source.enclosing_function(node)
        if here is there:
            return self.source.line(node) > self.source.line(point)
        if here is None:
            return there is not None  # functions run after the module-level code that defines them
        if there is None:
            return False
        if direct:  # builtins.print = print_pass in main_worker(): the functions it calls afterwards
            return self._called_after(point, here, there, set())
        inside = [s for s in self.context.call_sites(here) if self.source.enclosing_function(s) is there]
        if inside:
            return self.source.line(node) > min(self.source.line(s) for s in inside)
        callers = self.context.call_sites(there)
        if depth < 2 and callers and not any(self._after(point, direct, c, depth + 1) for c in callers):
            return False  # every call of node's function comes before the override
        return True


# What a call is named (the last part of its callee) when it writes a file, an image, a
# tensorboard event or to the terminal other than through ``print`` and ``logging`` (which a
# converted script shows on rank 0 only: ``ddpify.runtime``'s setup), a progress bar included:
# a project helper with none of these, itself or through what it calls, repeats nothing when
# every rank runs it.
_WRITE_CALLEES = frozenset(
    """open write writelines writerow writerows write_text write_bytes save savefig imsave imwrite save_image dump to_csv
    savetxt savez show add_scalar add_scalars add_image add_images add_figure add_histogram add_text
    rmtree copyfile copytree tqdm trange""".split()
)


def writing_functions(source: Source, functions: list[cst.FunctionDef]) -> set[cst.FunctionDef]:
    """Those of ``functions`` that write (a call named like one, in their body), themselves
    or through the module's own functions or the project helpers they call (``Helper.writes``)."""

    def answer(function: cst.FunctionDef, called: Callable[[cst.Call], bool | None]) -> bool | None:
        calls = source.of_types_in(function, cst.Call)
        return any(_writes(c) or called(c) for c in calls) or None

    return set(through_calls(source, functions, answer, lambda helper: helper.writes or None))


def _writes(call: cst.Call) -> bool:
    """A call named like a write; ``open`` only with a mode that writes (``open(p)`` and
    ``open(p, "r")`` read: Deep-SVDD's ``Config.load_config``)."""
    name = cstutil.callee_name(call)
    if name != "open":
        return name in _WRITE_CALLEES
    mode = open_mode(call)
    return mode is not None and (not isinstance(mode, str) or any(flag in mode for flag in "wax+"))


def open_mode(call: cst.Call) -> str | cst.BaseExpression | None:
    """The mode of ``open(path, mode)`` / ``path.open(mode)``: its text when a literal, else the
    expression; None when none is given (reading)."""
    position = 0 if isinstance(call.func, cst.Attribute) else 1  # path.open("w") / open(path, "w")
    mode = cstutil.keyword_value(call, "mode")
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    if mode is None and len(positional) > position:
        mode = positional[position]
    text = mode.evaluated_value if isinstance(mode, cst.SimpleString) else None
    return text if isinstance(text, str) else mode


# Methods that change the object they are called on: what a helper does to an argument the
# ranks share (a model put in eval mode, an optimizer stepped, a list appended to).
_CHANGING = MUTATORS | frozenset({"eval", "train", "step", "zero_grad", "load_state_dict", "to", "cuda", "requires_grad_", "apply"})


def argument_changers(source: Source, functions: list[cst.FunctionDef]) -> set[cst.FunctionDef]:
    """Those of ``functions`` that may change what they are given or module state: ``global``,
    an attribute or item assigned on a parameter, a changing method called on one
    (``model.eval()`` unless ``model.train()`` follows it), or a parameter handed to one of the
    module's own functions that changes the parameter it lands in (``save_image(x)`` calling
    ``denormalize(x)``, which only reads it, changes nothing). Solved once per function over
    the module's own calls (a worklist: each function is re-read only when a callee of it
    turns out to change a parameter); a call that cannot be matched to parameters counts as
    a change."""
    changed = {f: _changes_directly(source, f) for f in functions}
    callers: dict[cst.FunctionDef, list[tuple[cst.FunctionDef, cst.Call]]] = {}
    for function in functions:
        for call in source.of_types_in(function.body, cst.Call):
            assert isinstance(call, cst.Call)
            for callee in source.functions_called(call):
                callers.setdefault(callee, []).append((function, call))
    pending = [f for f in functions if changed[f]]
    while pending:
        callee = pending.pop()
        for caller, call in callers.get(callee, []):
            handed = _handed_parameters(caller, call, callee, changed[callee])
            if handed - changed.setdefault(caller, set()):
                changed[caller] |= handed
                pending.append(caller)
    return {f for f in functions if changed[f]}


_STATE = "<state>"  # module state (``global``): the function changes something beyond its parameters


def _changes_directly(source: Source, function: cst.FunctionDef) -> set[str]:
    """The parameters ``function`` changes in its own body (``_STATE`` for module state)."""
    params = cstutil.parameter_names(function.params)
    if source.of_types_in(function.body, cst.Global, cst.Nonlocal):
        return {_STATE}
    found = _assigned_into(source, function, params)
    called = [c for c in source.of_types_in(function.body, cst.Call) if isinstance(c, cst.Call)]
    methods = {(_root(c.func.value), c.func.attr.value) for c in called if isinstance(c.func, cst.Attribute)}
    restored = {owner for owner, method in methods if method == "eval" and (owner, "train") in methods}
    return found | {
        owner for owner, method in methods if owner in params and owner not in restored and (method in _CHANGING or _in_place(method))
    }


def _root(node: cst.BaseExpression) -> str | None:
    """The name an attribute or item chain starts from (``items`` of ``items[0].weight``)."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _in_place(method: str) -> bool:
    """PyTorch's in-place spelling: ``mul_``, ``clamp_``, ``zero_`` (not ``__call__``)."""
    return method.endswith("_") and not method.startswith("_")


def _handed_parameters(caller: cst.FunctionDef, call: cst.Call, callee: cst.FunctionDef, changes: set[str]) -> set[str]:
    """The caller's parameters that ``call`` hands to a parameter ``callee`` changes (all of
    those it hands when the arguments cannot be matched: ``*args``, ``**kwargs``)."""
    params = cstutil.parameter_names(caller.params)
    positional = [p.name.value for p in (*callee.params.posonly_params, *callee.params.params)]
    if positional and positional[0] in ("self", "cls") and isinstance(call.func, cst.Attribute):
        positional = positional[1:]
    named = set(positional) | {p.name.value for p in callee.params.kwonly_params}
    found = {_STATE} if _STATE in changes else set()
    for index, argument in enumerate(call.args):
        if not (isinstance(argument.value, cst.Name) and argument.value.value in params):
            continue
        if argument.keyword is not None:
            target = argument.keyword.value if argument.keyword.value in named else None
        else:
            target = positional[index] if index < len(positional) and not argument.star else None
        if target is None or target in changes:  # into *args / **kwargs, or unmatched: may change
            found.add(argument.value.value)
    return found


def _assigned_into(source: Source, function: cst.FunctionDef, params: set[str]) -> set[str]:
    """The parameters ``function`` assigns into: ``param.x = ...`` / ``param[i] = ...``."""
    found: set[str] = set()
    for target in source.of_types_in(function.body, cst.AssignTarget, cst.AugAssign):
        node = target.target  # type: ignore[attr-defined]
        root = _root(node) if isinstance(node, (cst.Attribute, cst.Subscript)) else None
        if root in params:
            found.add(root)
    return found
