"""Where code turns a set into an order: ``list(set(words))``, ``enumerate(set(x))``, ``for w in
set(x)``, also through a name bound to the set (pygcn's ``classes = set(labels)`` then ``{c: i
for i, c in enumerate(classes)}``). A set of strings iterates in the order of the process's
string hashes, which Python seeds anew in every process: each rank numbers the items apart."""

from __future__ import annotations

import libcst as cst

from ddpify.analysis.source import Source

ORDERING = frozenset({"builtins.list", "builtins.tuple"})
SET = "builtins.set"


def ordered_set(source: Source, node: cst.BaseExpression) -> cst.BaseExpression | None:
    """What turns the set ``node`` into an order: the ``list(...)``/``tuple(...)`` around it, or
    the set itself where it is iterated (``enumerate(s)``, ``for w in s``, a comprehension)."""
    arg = source.parent(node)
    holder = source.parent(arg) if isinstance(arg, cst.Arg) else None
    if isinstance(holder, cst.Call) and len(holder.args) == 1:
        if source.qualified(holder.func) & ORDERING:
            return holder
        if "builtins.enumerate" in source.qualified(holder.func):
            return node
        return None
    if isinstance(arg, (cst.For, cst.CompFor)) and arg.iter is node:
        return node
    return None


def set_ordering_functions(source: Source, functions: list[cst.FunctionDef]) -> set[cst.FunctionDef]:
    """Of ``functions`` (a module's), those that turn a set into an order, themselves or through
    the module's functions they call."""
    callers: dict[cst.FunctionDef, set[cst.FunctionDef]] = {}
    for function in functions:
        for call in source.of_types_in(function, cst.Call):
            if not isinstance(call.func, cst.Name):
                continue  # `x.run()`: a method (every method of that name would be an edge); a class's are its own key
            for callee in source.functions_called(call):
                callers.setdefault(callee, set()).add(function)
    found = {f for f in functions if _orders_a_set(source, f)}
    pending = list(found)
    while pending:  # up the call graph, each function once: linear in the calls
        for caller in callers.get(pending.pop(), ()):
            if caller not in found:
                found.add(caller)
                pending.append(caller)
    return found


def _orders_a_set(source: Source, function: cst.FunctionDef) -> bool:
    for call in source.of_types_in(function, cst.Call):
        if SET not in source.qualified(call.func):
            continue
        if ordered_set(source, call) is not None:
            return True
        parent = source.parent(call)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
            name = parent.targets[0].target.value
            reads = [n for n in source.of_types_in(function, cst.Name) if n.value == name and n is not parent.targets[0].target]
            if any(ordered_set(source, n) is not None for n in reads):
                return True
    return False
