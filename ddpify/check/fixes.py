"""Fixes in plain PyTorch, for hand-written DDP code that does not use ``ddpify.runtime``.

A fix here never adds a dependency on ddpify: it uses what the script already imports
(``torch.distributed`` under whatever name the file gives it; an ``import`` is added only for
a standard module or torch itself), never adds a collective, and keeps a single-process run
doing what it did (``not dist.is_initialized() or dist.get_rank() == 0`` is true there).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import libcst as cst

from ddpify.analysis.ranks import Branch
from ddpify.check.rule import Import
from ddpify.convert import rewrites
from ddpify.tree import cstutil
from ddpify.tree.cstutil import code, is_simple_reference

if TYPE_CHECKING:
    from ddpify.check.file_info import FileInfo

DIST = "torch.distributed"


def with_imports(module: cst.Module, imports: Sequence[Import]) -> cst.Module:
    """``module`` with ``import m`` / ``import m as a`` added where missing (libcst's
    ``AddImportsVisitor``, which keeps an import that is already there)."""
    from libcst.codemod import CodemodContext
    from libcst.codemod.visitors import AddImportsVisitor

    context = CodemodContext()
    for name, asname in imports:
        AddImportsVisitor.add_needed_import(context, name, asname=asname)
    return AddImportsVisitor(context).transform_module(module)


def _module_imports(module: cst.Module) -> list[cst.Import | cst.ImportFrom]:
    """The imports at the top level of the module (also under ``try:`` / ``if``)."""
    found: list[cst.Import | cst.ImportFrom] = []
    todo: list[cst.CSTNode] = list(module.body)
    while todo:
        statement = todo.pop(0)
        if isinstance(statement, cst.SimpleStatementLine):
            found.extend(s for s in statement.body if isinstance(s, (cst.Import, cst.ImportFrom)))
        elif isinstance(statement, (cst.Try, cst.If)) and isinstance(statement.body, cst.IndentedBlock):
            todo.extend(statement.body.body)
    return found


def imported_as(module: cst.Module, dotted: str) -> str | None:
    """The name under which ``dotted`` (``torch.distributed``, ``os``) is reachable at module
    level: ``dist`` for ``import torch.distributed as dist``, ``torch.distributed`` for
    ``import torch``; None when it is not."""
    parent, _, last = dotted.rpartition(".")
    found: str | None = None
    for node in _module_imports(module):
        if isinstance(node, cst.Import):
            for alias in node.names:
                name = code(alias.name)
                asname = code(alias.asname.name) if alias.asname is not None else None
                if name == dotted:
                    return asname or dotted
                if asname is None and dotted.startswith(name + "."):
                    found = found or dotted  # `import torch`: torch.distributed
                if asname is not None and dotted.startswith(name + "."):
                    found = found or asname + dotted[len(name) :]
        elif isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative and parent:
            if code(node.module) == parent and not isinstance(node.names, cst.ImportStar):
                for alias in node.names:
                    if code(alias.name) == last:
                        return code(alias.asname.name) if alias.asname is not None else last
    return found


def reference(file: FileInfo, dotted: str, alias: str | None = None) -> tuple[str, tuple[Import, ...]]:
    """How a fix names module ``dotted`` in this file (``dist`` for torch.distributed, ``os``),
    and the import it needs, if any (``import torch.distributed as dist``). Once per file."""
    key = f"reference:{dotted}"
    if key not in file.memo:
        name = imported_as(file.module, dotted)
        if name is not None:
            file.memo[key] = (name, ())
        elif alias is not None and alias not in file.analysis.source.names_by_value:
            file.memo[key] = (alias, ((dotted, alias),))
        else:
            file.memo[key] = (dotted, ((dotted, None),))  # the alias means something else here
    return file.memo[key]  # type: ignore[return-value]


def dist_reference(file: FileInfo) -> tuple[str, tuple[Import, ...]]:
    return reference(file, DIST, "dist")


def main_process_test(file: FileInfo, node: cst.CSTNode) -> tuple[str, tuple[Import, ...]]:
    """The test for global rank 0 at ``node`` and the import it needs: in a script that uses
    ddpify.runtime, the converter's ``ddpify.is_main_process()``; elsewhere plain PyTorch, which
    is also true for the single process (where no group exists) unless the code runs in the
    distributed branch only."""
    if file.already_converted:
        return code(rewrites.main_process_test()), ()
    dist, imports = dist_reference(file)
    if file.analysis.context.branch(node) is Branch.DISTRIBUTED:
        return f"{dist}.get_rank() == 0", imports
    return f"not {dist}.is_initialized() or {dist}.get_rank() == 0", imports


def expression(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


def guarded(statement: cst.BaseStatement, test: str) -> cst.If:
    """``statement`` under ``if <test>:``, where the statement was (its comments stay above)."""
    guard = cst.parse_statement(f"if {test}:\n    pass\n")
    assert isinstance(guard, cst.If) and isinstance(guard.body, cst.IndentedBlock)
    return guard.with_changes(
        leading_lines=cstutil.leading_lines(statement),
        body=guard.body.with_changes(body=[statement.with_changes(leading_lines=())]),
    )


def merged_guards(
    originals: Sequence[cst.BaseStatement], updated: Sequence[cst.BaseStatement], new: Callable[[cst.BaseStatement], bool]
) -> list[cst.BaseStatement]:
    """``updated`` (a block's statements, one for one with ``originals``) with each guard a fix
    added (``new(original)``) merged into an adjacent ``if`` of the same test: two fixes on
    neighbouring lines give one ``if rank 0:`` block, not two identical ones in a row. The
    second guard's comments and blank lines move inside, above its first statement."""
    result: list[cst.BaseStatement] = []
    previous_new = False
    for original, statement in zip(originals, updated, strict=True):
        is_new = new(original)
        last = result[-1] if result else None
        if (is_new or previous_new) and _same_guard(last, statement):
            assert isinstance(last, cst.If) and isinstance(statement, cst.If)
            assert isinstance(last.body, cst.IndentedBlock) and isinstance(statement.body, cst.IndentedBlock)
            first, *rest = statement.body.body
            moved = first.with_changes(leading_lines=[*statement.leading_lines, *cstutil.leading_lines(first)])
            result[-1] = last.with_changes(body=last.body.with_changes(body=[*last.body.body, moved, *rest]))
        else:
            result.append(statement)
        previous_new = is_new
    return result


def _same_guard(first: cst.BaseStatement | None, second: cst.BaseStatement) -> bool:
    return (
        isinstance(first, cst.If)
        and isinstance(second, cst.If)
        and first.orelse is None
        and second.orelse is None
        and isinstance(first.body, cst.IndentedBlock)
        and isinstance(second.body, cst.IndentedBlock)
        and code(first.test) == code(second.test)
    )


def statement_of(call: cst.Call, parent) -> cst.SimpleStatementLine | None:
    """The statement line that is nothing but ``call`` (``torch.save(...)``, ``print(...)``),
    the one a guard can wrap; None for a call inside an expression or a line with several."""
    expr = parent(call)
    if not isinstance(expr, cst.Expr) or expr.value is not call:
        return None
    line = parent(expr)
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    return line


def rank_zero_guard(
    file: FileInfo, call: cst.Call, parent: Callable[[cst.CSTNode], cst.CSTNode | None]
) -> tuple[cst.SimpleStatementLine, Callable[[], cst.CSTNode], tuple[Import, ...]] | None:
    """The statement that is just ``call``, a builder that puts it under a global-rank-0 guard,
    and the import the guard needs; None when the call is part of a larger statement."""
    line = statement_of(call, parent)
    if line is None:
        return None
    test, imports = main_process_test(file, call)
    return line, lambda: guarded(line, test), imports


def unwrapped(model: cst.BaseExpression, *, always_wrapped: bool) -> cst.BaseExpression:
    """``model.module`` where the model is always wrapped, else ``getattr(model, "module", model)``
    (the plain model of a single-process run has no ``.module``)."""
    text = code(model)
    if always_wrapped:
        return expression(f"{text}.module")
    return expression(f'getattr({text}, "module", {text})')


def quiet_progress_bar(call: cst.Call, others: str) -> cst.Call | None:
    """``tqdm(...)`` shown on rank 0 only; None if its ``disable=`` already asks for the rank."""
    args = list(call.args)
    for index, arg in enumerate(args):
        if arg.keyword is not None and arg.keyword.value == "disable":
            if "rank" in code(arg.value) or "main_process" in code(arg.value):
                return None
            original = code(arg.value) if is_simple_reference(arg.value) else f"({code(arg.value)})"
            args[index] = arg.with_changes(value=expression(f"{original} or {others}"))
            break
    else:
        args.append(rewrites.keyword("disable", expression(others)))
    return call.with_changes(args=rewrites.fix_commas(args))
