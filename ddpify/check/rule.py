"""What a lint rule is: one DDP mistake, how to find it, and (where safe) how to fix it.

A rule is a libcst ``BatchableCSTVisitor``: all active rules of a file share one traversal and
one metadata resolution. Each rule carries its own VALID/INVALID examples; the test suite runs
them and ``ddpify rule CODE`` / docs/rules.md are generated from them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Literal

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider, QualifiedNameProvider

from ddpify.tree import cstutil
from ddpify.tree.cstutil import code

if TYPE_CHECKING:
    from ddpify.check.file_info import FileInfo

Fixability = Literal["safe", "unsafe"]
# A fix: the replacement node, or a function that builds it (never None) when a fix is applied.
# Building fixes renders the converter's jinja2 snippets; a check that fixes nothing skips it.
Replacement = cst.CSTNode | Callable[[], cst.CSTNode]
Severity = Literal["error", "warning", "note"]


@dataclass(frozen=True)
class Invalid:
    """An example the rule must flag; ``fixed`` is the source after ``--fix`` (with
    ``--unsafe-fixes`` for unsafe rules), or None where the rule does not fix this example."""

    code: str
    fixed: str | None = None


# An import a fix needs: (module, asname) for ``import module as asname`` (asname None: plain).
Import = tuple[str, str | None]


@dataclass
class Report:
    """One finding as the rule made it: the node, the message, the optional replacement.

    ``target`` is the node the replacement replaces when it is not ``node`` itself (a whole
    statement put under a guard, reported at its call); ``safety`` overrides the rule's fix
    safety for this finding (a fix that is safe in one place and not in another); ``imports``
    are what the replacement needs (added when missing)."""

    rule: type[Rule]
    node: cst.CSTNode
    message: str
    fix: Replacement | None = None
    target: cst.CSTNode | None = None
    safety: Fixability | None = None
    imports: tuple[Import, ...] = ()

    @property
    def fixable(self) -> bool:
        return self.fix is not None

    @property
    def fix_safety(self) -> Fixability | None:
        """How safe this finding's fix is: its own safety, else the rule's; None: no fix."""
        if self.fix is None:
            return None
        return self.safety or self.rule.fix

    @property
    def replaced(self) -> cst.CSTNode:
        return self.target if self.target is not None else self.node

    @property
    def replacement(self) -> cst.CSTNode | None:
        """The fixed node, built on first use."""
        if self.fix is not None and not isinstance(self.fix, cst.CSTNode):
            self.fix = self.fix()
        return self.fix


class Rule(cst.BatchableCSTVisitor):
    """One DDP mistake. ``default``: on without ``--select`` (the DDP checklist, each rule
    precise through the execution context: which ranks and processes run a line); the others
    are opt-in (``--select DDP0NN`` / ``--extend-select``), ``opt_in`` saying why they cannot
    be precise. ``fix`` is the safety of the rule's
    fixes unless a finding says otherwise (``Report.safety``); ``fix_notes`` and
    ``false_positives`` (where the rule is known to be wrong) are for its documentation."""

    code: ClassVar[str]
    name: ClassVar[str]
    message: ClassVar[str]
    why: ClassVar[str]
    severity: ClassVar[Severity] = "warning"
    default: ClassVar[bool] = False
    opt_in: ClassVar[str] = ""
    fix: ClassVar[Fixability | None] = None
    fix_notes: ClassVar[str] = ""
    false_positives: ClassVar[str] = ""
    valid: ClassVar[tuple[str, ...]] = ()
    invalid: ClassVar[tuple[Invalid, ...]] = ()

    METADATA_DEPENDENCIES = (QualifiedNameProvider, PositionProvider, ParentNodeProvider)

    def __init__(self, file: FileInfo) -> None:
        super().__init__()
        self.file = file
        self.reports: list[Report] = []

    def report(
        self,
        node: cst.CSTNode,
        message: str | None = None,
        replacement: Replacement | None = None,
        *,
        target: cst.CSTNode | None = None,
        safety: Fixability | None = None,
        imports: tuple[Import, ...] = (),
    ) -> None:
        fix = replacement if self.fix else None
        self.reports.append(Report(type(self), node, message or self.message, fix, target, safety, imports))

    def qualified(self, node: cst.CSTNode) -> set[str]:
        return {q.name for q in self.get_metadata(QualifiedNameProvider, node, set())}

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.get_metadata(ParentNodeProvider, node, None)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        return cstutil.ancestors(node, self.parent)


def short(node: cst.CSTNode, limit: int = 60) -> str:
    """The node's source on one line, shortened for a message."""
    text = " ".join(code(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
