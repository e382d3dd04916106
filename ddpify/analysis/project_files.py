"""Which files of its own project a checked file imports: a sibling module (``import utils``),
a package under the repository root (``from util.misc import is_main_process``), a relative
import. Their helpers decide facts of the file (``ddpify.analysis.project``), so the linter's
result cache hashes them too.

Standard library only, read with a regular expression over the import lines: the cache asks
this on every hit and must not pay for libcst. The files that import a checked module are found
too (``importers``): the calls they make decide facts of its functions. The repository root is the nearest folder above
the file with ``.git``, ``pyproject.toml``, ``setup.py`` or ``setup.cfg``; absolute imports
resolve against the file's own folder first, then each folder above it up to that root (a
script's own folder is on ``sys.path``, and its package's modules import their siblings through
it), and never leave it. Reading stops
``DEPTH`` imports away from the checked file: the imported modules and what they import.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DEPTH = 2
IMPORTERS_LIMIT = 2000  # project files read to find the importers of one module
_SKIPPED = frozenset({"venv", "env", "site-packages", "node_modules", "build", "dist", "__pycache__"})
ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w.][\w. \t,]*)", re.M)
_FROM = re.compile(r"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)", re.M)
_ALIAS = re.compile(r"^([\w.]+)(?:\s+as\s+(\w+))?$")


@dataclass(frozen=True)
class Import:
    """One imported module or name: ``import a.b as c`` is ``Import("a.b", 0, None, "c")``,
    ``from ..x import f as g`` is ``Import("x", 2, "f", "g")``; ``bound`` is the name the
    importing file uses (``a.b`` for a plain ``import a.b``)."""

    module: str
    level: int
    name: str | None
    bound: str


def imports(text: str) -> list[Import]:
    """Every import statement's bindings, in source order (``*`` imports are left out)."""
    found: list[Import] = []
    for match in _IMPORT.finditer(text):
        for part in _aliases(match.group(1)):
            module, alias = part
            found.append(Import(module, 0, None, alias or module))
    for match in _FROM.finditer(text):
        level, module = len(match.group(1)), match.group(2)
        for name, alias in _aliases(match.group(3).strip("()")):
            if name != "*" and "." not in name:
                found.append(Import(module, level, name, alias or name))
    return found


def defining_module(file: Path, name: str, hops: int = 5) -> tuple[Path, str]:
    """Where a package's ``__init__.py`` that re-exports ``name`` (``from .dataloader import
    create_dataloader``, through further ``__init__.py`` files) takes it from: that module and
    the name there; ``(file, name)`` itself otherwise. Re-exports cost no import depth: a
    package's public names are its modules' functions."""
    while hops and file.name == "__init__.py" and file.is_file():
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            break
        item = next((i for i in imports(text) if i.bound == name and i.name is not None), None)
        found = module_file(item.module, item.level, file) if item is not None else None
        if item is None or item.name is None or found is None:
            break
        file, name, hops = found, item.name, hops - 1
    return file, name


def star_imports(text: str) -> list[tuple[str, int]]:
    """``from module import *`` statements, in source order: (module, level)."""
    return [(m.group(2), len(m.group(1))) for m in _FROM.finditer(text) if m.group(3).strip("() \t") == "*"]


def _aliases(text: str) -> list[tuple[str, str | None]]:
    parts = (" ".join(p.split()) for p in text.replace("\\", " ").split(","))
    matches = (_ALIAS.match(p) for p in parts if p)
    return [(m.group(1), m.group(2)) for m in matches if m]


@functools.lru_cache(maxsize=256)
def project_root(folder: Path) -> Path:
    """The repository root above ``folder`` (``folder`` itself when no marker is found)."""
    for candidate in (folder, *folder.parents):
        if any((candidate / marker).exists() for marker in ROOT_MARKERS):
            return candidate
    return folder


def module_file(module: str, level: int, importer: Path) -> Path | None:
    """The project file of ``module`` as ``importer`` imports it, or None (the standard
    library, an installed package, a name that is not there). A folder without
    ``__init__.py`` (a namespace package, common in research code: ``from utils import misc``)
    is named by the ``__init__.py`` it would have, so that ``submodule`` finds its modules.
    A relative ``importer`` (``ddpify train.py`` run in a package's folder) is resolved first:
    the repository root may be above the working directory."""
    folder = importer.resolve().parent
    root = _top(folder, project_root(folder))
    if level:
        bases = [folder.parents[level - 2] if level > 1 else folder]
    else:
        bases = _absolute_bases(folder, root)
    relative = Path(*module.split(".")) if module else Path()
    added = _added_to_sys_path(importer) if not level else []
    for base in [*bases, *added]:
        inside = root if base not in added else base  # a folder the script puts on sys.path is the project's too
        for candidate in (base / relative).with_suffix(".py") if module else None, base / relative / "__init__.py":
            if candidate is not None and candidate.is_file() and candidate.resolve().is_relative_to(inside.resolve()):
                return _as_given(candidate, importer)
        namespace = base / relative
        if module and namespace.is_dir() and namespace.resolve().is_relative_to(inside.resolve()) and any(namespace.glob("*.py")):
            return _as_given(namespace / "__init__.py", importer)
    found = _unique_by_suffix(module, root.resolve()) if module and not level else None
    return _as_given(found, importer) if found is not None else None


@functools.lru_cache(maxsize=1024)
def _unique_by_suffix(module: str, root: Path) -> Path | None:
    """A dotted module that no search path reaches, as the one file of the project whose path
    ends with it: a script's configuration may put a folder on ``sys.path`` in code no reading
    follows (TorchSeg's config adds ``furnace/``, and the train scripts ``from engine.engine
    import Engine``). None unless exactly one file matches, for a single name (too common:
    ``utils``), and for a module installed or in the standard library."""
    parts = module.split(".")
    if len(parts) < 2 or importlib.util.find_spec(parts[0]) is not None:
        return None
    tail = (*parts[:-1], f"{parts[-1]}.py")
    package = (*parts, "__init__.py")
    found = [f for f in _suffix_index(root).get(parts[-1], []) if f.parts[-len(tail) :] == tail or f.parts[-len(package) :] == package]
    return found[0] if len(found) == 1 else None


@functools.lru_cache(maxsize=64)
def _suffix_index(root: Path) -> dict[str, list[Path]]:
    """The project's Python files by module name (a package by its folder's), read once per
    root and at most ``IMPORTERS_LIMIT`` of them."""
    index: dict[str, list[Path]] = {}
    for count, file in enumerate(_python_files(root)):
        if count >= IMPORTERS_LIMIT:
            return {}
        index.setdefault(file.parent.name if file.name == "__init__.py" else file.stem, []).append(file)
    return index


def _as_given(found: Path, importer: Path) -> Path:
    """``found`` relative to the working directory where ``importer`` was given so and it lies
    below it (reports name ``glow/trainer.py``, not its absolute path)."""
    if importer.is_absolute() or not found.is_relative_to(Path.cwd()):
        return found
    return found.relative_to(Path.cwd())


# ``sys.path.append("..")``, ``sys.path.insert(0, "../lib")``, ``sys.path.append(os.path.join(os.path.dirname(__file__), ".."))``
_SYS_PATH = re.compile(
    r"sys\.path\.(?:append|insert)\((?:\s*\d+\s*,)?\s*(?:os\.path\.join\(\s*os\.path\.dirname\(\s*(?:os\.path\.\w+\(\s*)?__file__\s*\)?\s*\)\s*,\s*)?[\"']([^\"']+)[\"']"
)


def _added_to_sys_path(importer: Path) -> list[Path]:
    """The folders ``importer`` puts on ``sys.path`` with a literal path (SAM's ``example/train.py``
    appends ``..`` to import ``sam.py``), relative to its own folder, where scripts are run."""
    try:
        stat = importer.stat()
    except OSError:
        return []
    text = _text(importer, stat.st_mtime_ns, stat.st_size)
    if text is None or "sys.path" not in text:
        return []
    folders = [importer.parent / m.group(1) for m in _SYS_PATH.finditer(text) if not Path(m.group(1)).is_absolute()]
    return [f for f in folders if f.is_dir()]


_SOURCE_ROOTS = ("src", "lib")


def _top(folder: Path, root: Path) -> Path:
    """The repository root, or without a marker above ``folder``, the working directory when
    ``folder`` is below it (a pre-commit run starts there)."""
    if root != folder:
        return root
    cwd = Path.cwd()
    return cwd if folder.resolve().is_relative_to(cwd.resolve()) else folder


def _absolute_bases(folder: Path, root: Path) -> list[Path]:
    """Where an absolute import of a module in ``folder`` may find the project's modules: the
    folder itself and each folder above it up to the repository root (the script run from
    ``pretrain/`` puts ``pretrain/`` on ``sys.path``, so ``pretrain/utils/arg_util.py`` imports
    its sibling as ``from utils import misc``); ``root`` is ``_top``'s. Then the source roots next to each of those
    (``src/``, ``lib/``), which the project puts on ``sys.path`` by installing itself or by an
    ``import _init_paths`` (HRNet's ``tools/`` scripts import ``from dataset import ...`` of
    ``lib/dataset``)."""
    bases = [folder]
    for parent in folder.parents:
        if bases[-1].resolve() == root.resolve():
            break
        bases.append(parent)
    return bases + [base / name for base in bases for name in _SOURCE_ROOTS if (base / name).is_dir()]


def submodule(package: Path, name: str) -> Path | None:
    """``package.name`` as a file, when ``package`` is a package's ``__init__.py``."""
    if package.name != "__init__.py":
        return None
    for candidate in package.parent / f"{name}.py", package.parent / name / "__init__.py":
        if candidate.is_file():
            return candidate
    return None


def imported_files(text: str, importer: Path) -> list[Path]:
    """The project files ``text`` (the source of ``importer``) imports, once each (resolved
    once per text and folder: the importer searches ask it of the same files again and again)."""
    return list(_imported_files(text, importer, Path.cwd()))


@functools.lru_cache(maxsize=8192)
def _imported_files(text: str, importer: Path, cwd: Path) -> tuple[Path, ...]:
    del cwd  # the cache key: a project without a root marker is the working directory
    found: dict[Path, None] = {}
    for module, level in star_imports(text):
        target = module_file(module, level, importer)
        if target is not None and target.is_file():
            found[target] = None
    for item in imports(text):
        target = module_file(item.module, item.level, importer)
        if target is None:
            continue
        if target.is_file():
            found[target] = None
        if item.name is not None:
            inner = submodule(target, item.name)
            if inner is not None:
                found[inner] = None
    found.pop(importer, None)
    found.pop(importer.resolve(), None)
    return tuple(found)


def imported_sources(text: str, importer: Path) -> list[tuple[Path, str]]:
    """The project files ``text`` (the source of ``importer``) imports and what they import,
    ``DEPTH`` deep, each once with its text."""
    seen: set[Path] = {importer}
    found: list[tuple[Path, str]] = []
    level = [(importer, text)]
    for _ in range(DEPTH):
        following: list[tuple[Path, str]] = []
        for file, source in level:
            for target in imported_files(source, file):
                if target in seen:
                    continue
                seen.add(target)
                try:
                    stat = target.stat()
                except OSError:
                    continue
                written = _text(target, stat.st_mtime_ns, stat.st_size)
                if written is not None:
                    following.append((target, written))
        found.extend(following)
        level = following
    return found


def importers(path: Path) -> list[Path]:
    """The project files that import ``path`` (see ``_importer_sources``)."""
    return [file for file, _ in _importer_sources(path)]


def importers_upto(path: Path, levels: int = 5) -> list[tuple[Path, str]]:
    """The project files (with their text) that import ``path`` directly or through up to
    ``levels - 1`` more (a package's ``__init__.py`` re-exporting it counts as one), nearest
    first. The project is walked once for all levels."""
    sources = _project_sources(_project_of(path))
    seen, level, found = {path.resolve()}, [path], []
    for _ in range(levels):
        following = [(f, text) for p in level for f, text in _importer_sources(p, sources) if f.resolve() not in seen]
        seen.update(f.resolve() for f, _ in following)
        level = [f for f, _ in following]
        found += following
    return list(dict(found).items())


def strips_prefix_elsewhere(path: Path, entry: str) -> bool:
    """Another file of ``path``'s project reads the checkpoint entry ``entry`` in a function (or
    top-level code) that expects the wrapper's ``module.`` prefix: it drops it (PAWS's
    fine_tune.py: ``{k.replace('module.', ''): v for k, v in checkpoint['encoder'].items()}``,
    also ``k[7:]``, a line or two after the read), or loads the entry into a wrapped model
    (``nn.DataParallel(model).load_state_dict(checkpoint['state_dict'])``): the repository's own
    readers expect the wrapper's keys in it."""
    read = re.compile(rf"\[\s*['\"]{re.escape(entry)}['\"]\s*\]")
    target = path.resolve()
    for file, text in _project_sources(_project_of(path)):
        if file == target or not read.search(text):
            continue
        for chunk in _DEFINITIONS.split(text):
            at = read.search(chunk)
            wrapped = _WRAPS.search(chunk)
            if at is not None and (_STRIPS_PREFIX.search(chunk) or (wrapped is not None and wrapped.start() < at.start())):
                return True
    return False


# Code that handles the wrapper's prefix: names it, or cuts its 7 characters; or that wraps the
# model before it reads the entry.
_STRIPS_PREFIX = re.compile(r"['\"]module\.?['\"]|\[\s*7\s*:\s*\]|len\(\s*['\"]module\.['\"]\s*\)")
_WRAPS = re.compile(r"\b(DataParallel|DistributedDataParallel|DDP)\(")
# Where one top-level definition ends and the next begins.
_DEFINITIONS = re.compile(r"^(?=(?:async\s+)?def |class )", re.M)


# A call or definition that may seed torch's RNG: ``torch.manual_seed``, a ``set_seed`` or
# ``seed_everything`` helper. Python's and NumPy's ``random.seed`` and ``initial_seed`` do not.
_SEEDING = re.compile(r"\b((?:\w+\.)*\w*seed\w*)\s*\(", re.I)
_NOT_SEEDING = re.compile(r"(^|\.)(random\.seed|initial_seed)$")
_TORCH_ALIAS = re.compile(r"^\s*import\s+torch\s+as\s+(\w+)", re.M)


def may_seed_torch(text: str) -> bool:
    """``text`` calls or defines something that may seed torch's RNG (see ``_SEEDING``); a
    generator's own ``g.manual_seed(s)`` seeds that generator only (``torch.`` or the module's
    alias for torch, ``th.manual_seed``, is the global one)."""
    torch = {"torch", *_TORCH_ALIAS.findall(text)}
    for match in _SEEDING.finditer(text):
        name = match.group(1)
        owner, _, last = name.rpartition(".")
        if _NOT_SEEDING.search(name) or (last == "manual_seed" and owner and owner.split(".")[0] not in torch):
            continue
        return True
    return False


def may_seed_torch_nearby(path: Path, text: str) -> bool:
    """The file (``text``), a project file importing it (five imports up: the entry script that
    spawns its workers) or one it imports (``DEPTH`` deep) may seed torch's RNG; assumed so when
    the project is too big to read. The same files as ``project_digest``: a cached result stays true."""
    if may_seed_torch(text) or not _project_sources(_project_of(path)):
        return True
    return any(may_seed_torch(other) for _, other in [*importers_upto(path), *imported_sources(text, path)])


def _importer_sources(path: Path, sources: list[tuple[Path, str]] | None = None) -> list[tuple[Path, str]]:
    """The project files that import ``path`` (its callers may live there: a ``Trainer`` built
    by ``train.py`` with a logger on rank 0 only), under the repository root, or under the
    working directory when no marker is found above the file; none when the project has more
    files than ``IMPORTERS_LIMIT``. ``sources``: the project's files, read already."""
    target = path.resolve()
    if sources is None:
        sources = _project_sources(_project_of(path))
    found = []
    named = path.parent.name if path.stem == "__init__" else path.stem  # a package is imported by its folder's name
    for file, text in sources:
        if file != target and named in text and target in {t.resolve() for t in imported_files(text, file)}:
            found.append((file, text))
    return found


def _project_of(path: Path) -> Path:
    """The folder whose files may import ``path``: its repository root, or the working
    directory when no marker is found above the file."""
    target = path.resolve()
    root = project_root(path.parent).resolve()
    cwd = Path.cwd().resolve()
    if not any((root / marker).exists() for marker in ROOT_MARKERS) and target.is_relative_to(cwd):
        return cwd  # no marker above the file: the folder the check runs from is the project
    return root


def _project_sources(root: Path) -> list[tuple[Path, str]]:
    """Every Python file under ``root`` (hidden and environment folders left out) with its text;
    a file is read again only when it changed."""
    found: list[tuple[Path, str]] = []
    for file in _python_files(root):
        if len(found) >= IMPORTERS_LIMIT:
            return []
        try:
            stat = file.stat()
        except OSError:
            continue
        text = _text(file, stat.st_mtime_ns, stat.st_size)
        if text is not None:
            found.append((file, text))
    return found


def _python_files(root: Path) -> Iterator[Path]:
    """The ``.py`` files under ``root`` in a stable order, never descending into hidden or
    environment folders; a folder that vanishes or cannot be read while it is walked (another
    process's temporary files) is skipped, not an error."""
    for folder, subfolders, files in os.walk(root, onerror=lambda _error: None):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d not in _SKIPPED)
        for name in sorted(files):
            if name.endswith(".py"):
                yield Path(folder, name)


@functools.lru_cache(maxsize=4096)
def _text(file: Path, mtime_ns: int, size: int) -> str | None:
    del mtime_ns, size  # the cache key: a changed file is read again
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def project_digest(text: str, path: str) -> str:
    """A hash of the project files the checked file's facts may come from (its imports and
    theirs, ``DEPTH`` deep, and the files that import it, five imports up), or "" when there are none."""
    importer = Path(path)
    if not importer.is_file():
        return ""
    digest = hashlib.sha256()
    seen: set[Path] = set()
    for other, written in importers_upto(importer):  # their calls decide facts of this file's functions
        seen.add(other)
        digest.update(str(other).encode() + b"\0" + written.encode("utf-8", "surrogatepass") + b"\0")
    for target, written in imported_sources(text, importer):
        if target not in seen:
            seen.add(target)
            digest.update(str(target).encode() + b"\0" + written.encode("utf-8", "surrogatepass") + b"\0")
    return digest.hexdigest() if seen else ""
