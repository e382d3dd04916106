"""Check one file: parse once, resolve metadata once, run the selected rules in one batched
traversal, drop suppressed findings, and optionally apply the fixes (re-checking until stable).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from ddpify.analysis import star_imports
from ddpify.check import noqa, scope
from ddpify.check.file_info import FileInfo
from ddpify.check.fixes import merged_guards, with_imports
from ddpify.check.rule import Import, Report, Rule
from ddpify.check.rules import ALL_RULES
from ddpify.convert.rewrites import RT, RUNTIME_IMPORT, with_runtime_import
from ddpify.errors import compiles, syntax_error
from ddpify.findings import CheckResult, Finding
from ddpify.tree import cstutil
from ddpify.tree.metadata import FastMetadata, visitor_names

MAX_FIX_ROUNDS = 4


def _has_attribute_hooks(kind: type) -> bool:
    return cstutil.has_attribute_hooks(visitor_names(kind))


def _run_rules(wrapper: MetadataWrapper, visitors: Sequence[Rule]) -> None:
    """``wrapper.visit_batched(visitors)``, on the flat tree when no rule has attribute hooks."""
    if any(_has_attribute_hooks(type(v)) for v in visitors):
        wrapper.visit_batched(visitors)
        return
    methods: dict[str, list[cstutil.VisitorMethod]] = {}
    for visitor in visitors:
        for name in visitor_names(type(visitor)):
            methods.setdefault(name, []).append(getattr(visitor, name))
    with contextlib.ExitStack() as stack:
        for visitor in visitors:
            stack.enter_context(visitor.resolve(wrapper))
        cstutil.visit_batched(wrapper.module, methods)


def select_rules(
    select: Sequence[str] | None = None, ignore: Sequence[str] | None = None, extend_select: Sequence[str] | None = None
) -> list[type[Rule]]:
    """Rules whose code starts with one of ``select`` (without it: the default rules), plus those
    of ``extend_select``, minus those of ``ignore``; as ruff, ``--select DDP`` is every rule."""

    def matches(rule: type[Rule], prefixes: Sequence[str] | None) -> bool:
        return bool(prefixes) and any(rule.code.startswith(p.upper()) for p in prefixes or ())

    chosen = [r for r in ALL_RULES if (matches(r, select) if select else r.default) or matches(r, extend_select)]
    return [r for r in chosen if not matches(r, ignore)]


def check_source(
    source: str,
    path: str = "<string>",
    *,
    rules: Sequence[type[Rule]] | None = None,
    fix: bool = False,
    unsafe_fixes: bool = False,
    require_ddp: bool = False,
) -> CheckResult:
    """Lint ``source`` with ``rules`` (None: every rule, the default ones and the opt-in ones).
    With ``fix``, apply safe fixes (and unsafe ones with ``unsafe_fixes``) and return the fixed
    source in ``CheckResult.fixed``; findings are those that remain."""
    active = list(ALL_RULES if rules is None else rules)
    current = source
    for _ in range(MAX_FIX_ROUNDS):
        findings, reports, distributed = _check_once(current, path, active, require_ddp)
        allowed = [r for r in reports if r.fix_safety == "safe" or (r.fix_safety == "unsafe" and unsafe_fixes)]
        if not fix or not allowed:
            return CheckResult(path, tuple(findings), source, current if fix and current != source else None, distributed)
        fixed = _apply(findings_module(current), allowed)
        if fixed == current:
            break
        current = fixed
    findings, _, distributed = _check_once(current, path, active, require_ddp)
    return CheckResult(path, tuple(findings), source, current if current != source else None, distributed)


@functools.lru_cache(maxsize=8)
def findings_module(source: str) -> cst.Module:
    return cst.parse_module(source)


def _check_once(source: str, path: str, active: Sequence[type[Rule]], require_ddp: bool) -> tuple[list[Finding], list[Report], bool]:
    if not scope.mentions_distributed(source, path):
        check_syntax(source, path)  # still refuse broken files
        return scope.not_distributed(path, require_ddp), [], False
    module = _parse(source, path)
    wrapper = FastMetadata(module, star_imports.resolver(path))
    file = FileInfo(path, source, wrapper)
    if not scope.is_distributed_file(file):
        return scope.not_distributed(path, require_ddp), [], False
    visitors = [rule(file) for rule in active]
    if visitors:
        _run_rules(wrapper, visitors)
    reports = [r for v in visitors for r in v.reports]
    if not reports:
        return [], [], True
    positions = wrapper.resolve(PositionProvider)
    parents = wrapper.resolve(ParentNodeProvider)
    table = noqa.suppressions(source)
    findings: list[Finding] = []
    kept: list[Report] = []
    for report in reports:
        span = positions[report.node]
        lines = _statement_lines(report.node, positions, parents)
        if noqa.is_suppressed(report.rule.code, lines, table):
            continue
        kept.append(report)
        findings.append(
            Finding(
                path,
                span.start.line,
                span.start.column + 1,
                report.rule.code,
                report.message,
                report.fix_safety,
                span.end.line,
                span.end.column + 1,
            )
        )
    return sorted(set(findings)), kept, True


def _statement_lines(node: cst.CSTNode, positions, parents) -> range:
    """Lines of the simple statement holding ``node`` (or of the node itself)."""
    current: cst.CSTNode | None = node
    while current is not None and not isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        current = parents.get(current)
    if isinstance(current, cst.BaseCompoundStatement):
        span = positions[node]
        header = positions[current].start.line
        return range(min(header, span.start.line), span.start.line + 1)
    span = positions[current if current is not None else node]
    return range(span.start.line, span.end.line + 1)


def check_syntax(source: str, path: str) -> None:
    """Refuse a file that does not parse, as ``_parse`` would, but through CPython's own
    parser (20x faster than building a libcst tree). Only when CPython refuses it does libcst
    parse it too, for the same message as ever (and to accept syntax newer than this Python
    that libcst knows)."""
    if not compiles(source, path):
        _parse(source, path)


def _parse(source: str, path: str) -> cst.Module:
    try:
        return findings_module(source)
    except cst.ParserSyntaxError as exc:
        raise syntax_error(source, path, exc) from None


class _Replace(cst.CSTTransformer):
    """Puts each replacement in place; guards added next to each other become one block."""

    def __init__(self, replacements: dict[cst.CSTNode, cst.CSTNode]) -> None:
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode):
        replaced = self.replacements.get(original_node, updated_node)
        if replaced is updated_node and isinstance(original_node, (cst.Module, cst.IndentedBlock)):
            assert isinstance(updated_node, (cst.Module, cst.IndentedBlock))
            body = merged_guards(original_node.body, updated_node.body, self._new_guard)
            if len(body) != len(updated_node.body):
                return updated_node.with_changes(body=body)
        return replaced

    def _new_guard(self, original: cst.BaseStatement) -> bool:
        return isinstance(self.replacements.get(original), cst.If) and not isinstance(original, cst.If)


def _apply(module: cst.Module, reports: Iterable[Report]) -> str:
    """Apply replacements whose targets do not contain one another (the rest wait for the
    next round, on the re-parsed result)."""
    chosen: dict[cst.CSTNode, cst.CSTNode] = {}
    needed: dict[cst.CSTNode, tuple[Import, ...]] = {}
    for report in reports:
        assert report.replacement is not None
        if report.replaced not in chosen:
            chosen[report.replaced] = report.replacement
            needed[report.replaced] = report.imports
    targets = list(chosen)
    nested = {t for t in targets for other in targets if other is not t and _contains(other, t)}
    fixed = module.visit(_Replace({k: v for k, v in chosen.items() if k not in nested}))
    imports = {i for target, wanted in needed.items() if target not in nested for i in wanted}
    if imports:
        fixed = with_imports(fixed, sorted(imports, key=lambda i: (i[0], i[1] or "")))
    if _needs_import(fixed):
        fixed = with_runtime_import(fixed)
    return fixed.code


def _needs_import(module: cst.Module) -> bool:
    code = module.code
    return f"{RT}." in code and f"import {RUNTIME_IMPORT[0]} as {RT}" not in code


def _contains(outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
    found = False

    class _Find(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            nonlocal found
            if node is inner:
                found = True
            return not found

    outer.visit(_Find())
    return found
