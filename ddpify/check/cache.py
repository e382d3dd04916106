"""A result cache for ``ddpify check``, so a pre-commit run over unchanged files costs a file
read and a hash per file (and imports neither libcst nor the rules).

An entry holds the findings of one file, without its path. Its key is a hash of everything the
findings depend on: the file's text, the project modules it imports (their helpers decide
facts of the file), the rule selection in force for it (``--select`` /
``--extend-select`` / ``--ignore`` / ``[tool.ddpify]``, per-file ignores included), ``--require-ddp``, and a
fingerprint of the checker itself (the ddpify version, the content of every module of the
``ddpify`` package, the libcst and Python versions). Change any of them and the entry is simply
not found: an entry is never stale, only unused. Entries are written atomically (a temporary
file, then a rename), unreadable ones are ignored, and the whole folder is safe to delete at
any time.

Where: ``$DDPIFY_CACHE_DIR`` if set, else the user cache folder (``$XDG_CACHE_HOME/ddpify``,
``~/.cache/ddpify``; ``~/Library/Caches/ddpify`` on macOS; ``%LOCALAPPDATA%\\ddpify\\Cache``
on Windows). ``ddpify check --no-cache`` neither reads nor writes it. Entries written more
than 30 days ago are pruned (looked for at most once a day); one still needed is recomputed.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from ddpify import __version__
from ddpify.findings import Finding

FORMAT = "v1"
PRUNE_AFTER_S = 30 * 24 * 3600
PRUNE_EVERY_S = 24 * 3600


def default_dir() -> Path:
    configured = os.environ.get("DDPIFY_CACHE_DIR")
    if configured:
        return Path(configured)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
        return base / "ddpify" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "ddpify"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ddpify"


@functools.lru_cache(maxsize=1)
def fingerprint() -> str:
    """What identifies this checker: version, the bytes of every ddpify module (an edited
    rule in a development checkout changes it), the libcst and Python versions."""
    return package_fingerprint(Path(__file__).resolve().parent.parent)


def package_fingerprint(package: Path) -> str:
    digest = hashlib.sha256(f"{FORMAT}\0{__version__}\0{sys.version}\0{_libcst_version()}".encode())
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"?")
    return digest.hexdigest()


def _libcst_version() -> str:
    """libcst's version file, read without importing libcst (or importlib.metadata: each
    costs more than a cache hit)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("libcst")
        origin = spec.origin if spec is not None else None
        if origin:
            return (Path(origin).parent / "_version.py").read_text(encoding="utf-8")
    except (ImportError, OSError, ValueError):
        pass
    return "?"


class Cache:
    def __init__(self, directory: Path | None = None) -> None:
        self.root = (directory or default_dir()) / FORMAT
        self._writable = True
        self._pruned = False

    @staticmethod
    def key(
        text: str, select: Sequence[str], ignore: Sequence[str], require_ddp: bool, extend_select: Sequence[str] = (), project: str = ""
    ) -> str:
        """``project``: the digest of the project modules the file imports and of those that
        import it (their helpers and calls decide findings of the file,
        ``ddpify.analysis.project_files.project_digest``)."""
        digest = hashlib.sha256(fingerprint().encode())
        digest.update(json.dumps([list(select), list(ignore), require_ddp, list(extend_select), project]).encode())
        digest.update(b"\0")
        digest.update(text.encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key[2:]}.json"

    def get(self, key: str, path: str) -> tuple[tuple[Finding, ...], bool] | None:
        """The findings (re-attached to ``path``) and the distributed flag, or None."""
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            findings = tuple(Finding(path, *row) for row in data["findings"])
            distributed = bool(data["distributed"])
        except (OSError, ValueError, TypeError, KeyError):
            return None
        return findings, distributed

    def put(self, key: str, findings: Sequence[Finding], distributed: bool) -> None:
        if not self._writable:
            return
        rows = [[f.line, f.column, f.code, f.message, f.fix, f.end_line, f.end_column] for f in findings]
        target = self._path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".", suffix=".tmp")
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump({"findings": rows, "distributed": distributed}, out)
            os.replace(temporary, target)
        except OSError:
            self._writable = False  # read-only home, full disk: run uncached, never fail
            return
        self._maybe_prune()

    def _maybe_prune(self) -> None:
        """Delete entries not written for 30 days; look at most once a day."""
        if self._pruned:
            return
        self._pruned = True
        marker = self.root / ".pruned"
        now = time.time()
        try:
            if now - marker.stat().st_mtime < PRUNE_EVERY_S:
                return
        except OSError:
            pass
        try:
            marker.touch()
            for entry in self.root.glob("*/*.json"):
                try:
                    if now - entry.stat().st_mtime > PRUNE_AFTER_S:
                        entry.unlink()
                except OSError:
                    pass
        except OSError:
            pass
