"""``--standalone``: embed the runtime helpers a converted script uses, so it needs only torch.

The block replaces ``import ddpify.runtime as ddpify``; it is rendered from
``templates/standalone.py.j2`` with source copied from ``ddpify/runtime`` by
:mod:`ddpify.runtime_sources`. Marker comments delimit it so that converting the output
again first puts the import back (:func:`unembed`), converts, and re-embeds: idempotent.
"""

from __future__ import annotations

import re

import libcst as cst

from ddpify import __version__, runtime_sources, templating
from ddpify.errors import DdpifyError, InternalError

PACKAGE = "_ddpify_embedded_runtime"
BEGIN = "# >>> ddpify standalone runtime >>>"
END = "# <<< ddpify standalone runtime <<<"
RUNTIME_IMPORT = "import ddpify.runtime as ddpify"
ALIAS = "ddpify"

_BLOCK = re.compile(rf"^{re.escape(BEGIN)}\r?$.*?^{re.escape(END)}(?=\r?$)", re.S | re.M)
_IMPORT_LINE = re.compile(rf"^{re.escape(RUNTIME_IMPORT)}(?=[ \t]*\r?$)", re.M)


class _UsedHelpers(cst.CSTVisitor):
    """``ddpify.X`` attributes the script reads; ``everything`` when ``ddpify`` itself escapes
    (passed to a function, for example), since then any helper may be used."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.everything = False

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if isinstance(node.value, cst.Name) and node.value.value == ALIAS:
            self.names.add(node.attr.value)
            return False
        return True

    def visit_Name(self, node: cst.Name) -> None:
        if node.value == ALIAS:
            self.everything = True


def is_standalone(code: str) -> bool:
    return _BLOCK.search(code) is not None


def unembed(code: str) -> str:
    """Put ``import ddpify.runtime as ddpify`` back where an embedded block stands."""
    return _BLOCK.sub(RUNTIME_IMPORT, code, count=1)


def embed(code: str) -> str:
    """Replace the runtime import of converted ``code`` by the embedded helpers it uses; code
    without that import (nothing was converted) is returned unchanged."""
    if len(_IMPORT_LINE.findall(code)) != 1:
        return code
    tree = cst.parse_module(code)
    visitor = _UsedHelpers()
    tree.visit(visitor)
    runtime = runtime_sources.load_runtime()
    exported = runtime_sources.exports(runtime)
    used = sorted(exported) if visitor.everything else sorted(visitor.names)
    unknown = [name for name in used if name not in exported]
    if unknown:
        raise DdpifyError(f"ddpify.runtime has no {', '.join(unknown)}; cannot embed it (--standalone)")
    keep = runtime_sources.needed(runtime, [exported[name] for name in used])
    modules = [(name, runtime_sources.pruned_source(runtime[name], names)) for name, names in sorted(keep.items())]
    for name, source in modules:
        if "'''" in source:
            raise InternalError(f"ddpify/runtime/{name}.py contains ''' and cannot be embedded in a raw string")
    by_module: dict[str, list[str]] = {}
    for name in used:
        by_module.setdefault(exported[name][0], []).append(name)
    block = (
        templating.environment(trim_blocks=True, lstrip_blocks=True)
        .get_template("standalone.py.j2")
        .render(
            begin=BEGIN,
            end=END,
            version=__version__,
            used=used,
            package=PACKAGE,
            exports=sorted(by_module.items()),
            modules=modules,
        )
        .rstrip("\n")
    )
    block = block.replace("\n", tree.default_newline)
    output = _IMPORT_LINE.sub(lambda _: block, code, count=1)
    try:  # never hand out code that does not parse
        cst.parse_module(output)
    except cst.ParserSyntaxError as exc:
        raise InternalError(f"the standalone output would not parse ({exc.message}); this is a ddpify bug") from None
    return output
