"""Reading scripts faithfully and writing results atomically, so no user data is ever lost."""

from __future__ import annotations

import io
import os
import stat
import tempfile
import tokenize
from dataclasses import dataclass
from pathlib import Path

from ddpify.errors import DdpifyError


@dataclass(frozen=True)
class SourceFile:
    """Decoded text plus what is needed to write it back byte-faithfully."""

    text: str
    encoding: str
    bom: bool


def decode(data: bytes, name: str) -> SourceFile:
    """Decode like Python does (PEP 263 cookie, BOM), refusing binary and undecodable input."""
    if b"\x00" in data:
        raise DdpifyError(f"{name}: binary file, not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        raise DdpifyError(f"{name}: cannot decode: {exc}") from None
    bom = encoding == "utf-8-sig"
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise DdpifyError(f"{name}: cannot decode as {encoding}: {exc.__class__.__name__} at byte {getattr(exc, 'start', '?')}") from None
    # newline="" semantics: keep \r\n exactly as it was.
    return SourceFile(text=text, encoding="utf-8" if bom else encoding, bom=bom)


def encode(source: SourceFile, text: str) -> bytes:
    try:
        body = text.encode(source.encoding)
    except UnicodeEncodeError as exc:
        raise DdpifyError(
            f"cannot encode the result as {source.encoding} (the input's encoding): "
            f"{exc.object[exc.start : exc.end]!r} at character {exc.start}"
        ) from None
    return (b"\xef\xbb\xbf" if source.bom else b"") + body


def read_source(path: Path) -> SourceFile:
    if path.is_dir():
        raise DdpifyError(f"{path}: is a directory, expected a Python file")
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DdpifyError(f"{path}: no such file") from None
    except OSError as exc:
        raise DdpifyError(f"{path}: cannot read: {exc.strerror}") from None
    return decode(data, str(path))


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def check_output_path(path: Path) -> None:
    """Refuse an output that is not a regular file or a new path, before any work is done.

    A rename over a FIFO, a device or ``/dev/stdout`` (a symlink to a pipe) would silently
    replace it with a regular file, so anything but a regular file (a symlink to one included)
    is an error that names the path as given; ``-o -`` is how to ask for stdout.
    """
    try:
        mode = os.stat(path).st_mode  # follows symlinks: judge what would be written
    except FileNotFoundError:
        return  # a new file (or a dangling symlink, whose target gets created)
    except OSError as exc:
        raise DdpifyError(f"{path}: cannot write: {exc.strerror}") from None
    if stat.S_ISREG(mode):
        return
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    via = ", through a symlink" if path.is_symlink() else ""
    hint = (
        "-o takes the output file's name (--out-dir a folder)" if stat.S_ISDIR(mode) else "-o writes only regular files (-o - for stdout)"
    )
    raise DdpifyError(f"{path}: is {kind}{via}; {hint}; nothing written")


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file and a rename: old file or new, never half.

    A symlink is written through (its target gets the new content, the link stays); an existing
    file keeps its permission bits, a new one gets the umask's, like ``open(path, "w")``. Any
    failure, an interruption included, removes the temporary file and leaves ``path`` as it was.
    Only a regular file or a new path is ever replaced (:func:`check_output_path`).
    """
    check_output_path(path)
    if path.is_symlink():
        path = Path(os.path.realpath(path))
    directory = path.parent if str(path.parent) else Path(".")
    try:
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask()
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".ddpify-tmp", dir=directory)
    except OSError as exc:
        raise DdpifyError(f"{path}: cannot write: {exc.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as exc:  # disk full, quota, a vanished directory: one line, nothing half-written
        Path(temporary).unlink(missing_ok=True)
        raise DdpifyError(f"{path}: cannot write: {exc.strerror or exc}") from None
    except BaseException:  # an interruption: the old file stays, the temporary goes
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
