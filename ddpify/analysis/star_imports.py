"""What ``from utils import *`` of a project module binds besides the module's own functions:
the libraries that module imports. A script that writes ``import torch.optim as optim`` and
``from utils import *`` (NRI's train.py) reads ``torch`` through the star import of
``utils.py``'s ``import torch``: without this, ``torch.save`` and ``torch.load`` there name no
known API, a checkpoint save looks like the project's own code and a load gets no
``map_location``. The answers are import statements, as the star import would bind them,
for ``ddpify.tree.qualified_names`` to bind where the star import stands. Standard library only."""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from pathlib import Path

from ddpify.analysis import project_files

_DEPTH = 3  # star imports followed through as many project modules


def resolver(importer: str | None) -> Callable[[str, int], tuple[str, ...]] | None:
    """For a file at ``importer``: the import statements that its ``from <module> import *``
    (module name, relative level) brings in; None without a file to resolve from."""
    if importer is None or not Path(importer).is_file():
        return None
    path = Path(importer)
    return lambda module, level: library_imports(module, level, path)


def library_imports(module: str, level: int, importer: Path, depth: int = _DEPTH) -> tuple[str, ...]:
    """The import statements of the project module ``from <module> import *`` names, as that
    star import binds them: top-level absolute imports of public names (all of them, or those
    ``__all__`` lists), through further star imports of project modules."""
    found = project_files.module_file(module, level, importer)
    if found is None or depth <= 0:
        return ()
    try:
        stat = found.stat()
    except OSError:
        return ()
    return _library_imports(found.resolve(), stat.st_mtime_ns, depth)


@functools.lru_cache(maxsize=256)
def _library_imports(file: Path, mtime_ns: int, depth: int) -> tuple[str, ...]:
    del mtime_ns  # the cache key: a changed file is read again
    try:
        tree = ast.parse(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return ()
    listed = _all(tree)
    statements: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.names[0].name == "*":
            if node.module is not None or node.level:
                statements += library_imports(node.module or "", node.level, file, depth - 1)
            continue
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or (isinstance(node, ast.ImportFrom) and node.level):
            continue  # a relative import names the module's own package: not rebased here
        for alias in node.names:
            bound = (alias.asname or alias.name).split(".")[0]
            if bound.startswith("_") or (listed is not None and bound not in listed):
                continue
            single = ast.Import(names=[alias]) if isinstance(node, ast.Import) else ast.ImportFrom(node.module, [alias], 0)
            statements.append(ast.unparse(single))
    return tuple(dict.fromkeys(statements))


def _all(tree: ast.Module) -> set[str] | None:
    """The names ``__all__ = [...]`` lists (a literal), or None where the module sets none."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                return {str(n) for n in ast.literal_eval(node.value)}
            except (ValueError, TypeError, SyntaxError):
                return set()
    return None
