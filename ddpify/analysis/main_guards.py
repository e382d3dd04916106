"""Code only the launched script's own process runs: under ``if __name__ == "__main__":``.

With ``mp.spawn`` every worker imports the script again as ``__mp_main__``, so code behind that
test runs in the launching process alone. Scripts spell the test in more ways than the guard
block (the Annotated Transformer, a notebook saved as a script):

- a conjunction holding it: ``if __name__ == "__main__" and RUN_EXAMPLES:``;
- a function of the file that returns it: ``def is_interactive_notebook(): return __name__ ==
  "__main__"``, then ``if is_interactive_notebook():``;
- a runner that calls what it is given only behind it: ``def show_example(fn, args=[]): if
  __name__ == "__main__" and RUN_EXAMPLES: return fn(*args)``; the functions handed to such a
  runner (``show_example(example_mask)``) run in the launching process alone, as do functions
  handed over inside a guarded block.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import libcst as cst

from ddpify.analysis.source import Source


def is_name_test(test: cst.BaseExpression) -> bool:
    """``__name__ == "__main__"`` (either side)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    sides = (test.left, target.comparator)
    names = [s.value for s in sides if isinstance(s, cst.Name)]
    strings = [s.evaluated_value for s in sides if isinstance(s, cst.SimpleString)]
    return isinstance(target.operator, cst.Equal) and names == ["__name__"] and strings == ["__main__"]


class MainGuards:
    """The main-process tests of one file and what they keep in the launching process."""

    def __init__(self, source: Source) -> None:
        self.source = source

    def is_test(self, test: cst.BaseExpression) -> bool:
        """``test`` is true only in the launched script's own process (see the module docstring)."""
        if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            return self.is_test(test.left) or self.is_test(test.right)
        if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and not test.args:
            return test.func.value in self._test_functions
        return is_name_test(test)

    def guards(self, node: cst.CSTNode) -> bool:
        """``node`` sits in the body of an ``if`` whose test is such a test."""
        child = node
        for ancestor in self.source.ancestors(node):
            if isinstance(ancestor, cst.If) and child is ancestor.body and self.is_test(ancestor.test):
                return True
            child = ancestor
        return False

    @functools.cached_property
    def _test_functions(self) -> frozenset[str]:
        """Module-level functions whose body returns ``__name__ == "__main__"``."""
        found = set()
        for statement in self.source.module.body:
            if isinstance(statement, cst.FunctionDef) and _returns_only(statement, is_name_test):
                found.add(statement.name.value)
        return frozenset(found)

    @functools.cached_property
    def runners(self) -> frozenset[cst.FunctionDef]:
        """Module-level functions that do everything behind such a test (``show_example``)."""
        found = set()
        for statement in self.source.module.body:
            if isinstance(statement, cst.FunctionDef) and isinstance(statement.body, cst.IndentedBlock):
                body = [s for s in statement.body.body if not _is_docstring(s)]
                if body and all(isinstance(s, cst.If) and s.orelse is None and self.is_test(s.test) for s in body):
                    found.add(statement)
        return frozenset(found)

    @functools.cached_property
    def launched_only(self) -> frozenset[cst.FunctionDef]:
        """Functions of the file handed (not called) to a runner, or handed over inside a
        guarded block: they run in the launching process, if at all."""
        runner_names = {f.name.value for f in self.runners}
        found: set[cst.FunctionDef] = set()
        for call in self.source.of_types(cst.Call):
            assert isinstance(call, cst.Call)
            to_runner = isinstance(call.func, cst.Name) and call.func.value in runner_names
            if not to_runner and not (self.source.enclosing_function(call) is None and self.guards(call)):
                continue
            for arg in call.args:
                if isinstance(arg.value, cst.Name):
                    found.update(f for f in self.source.functions.get(arg.value.value, []) if not self.source.is_method(f))
        return frozenset(found)


def _returns_only(function: cst.FunctionDef, test: Callable[[cst.BaseExpression], bool]) -> bool:
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    statements = [s for s in body if not _is_docstring(s)]
    if len(statements) != 1 or not isinstance(statements[0], cst.SimpleStatementLine):
        return False
    small = statements[0].body[0] if len(statements[0].body) == 1 else None
    return isinstance(small, cst.Return) and small.value is not None and test(small.value)


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
