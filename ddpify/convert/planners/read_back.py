"""Files a script writes and then reads back: once rank 0 alone writes such a file (a
vocabulary, an array, an image grid, a downloaded archive), a rank that reads it without
waiting may find it missing or half written. ``reloads.plan`` makes every rank that reads it
alike wait (a barrier before the read); a read it cannot place one before (a barrier in code
only some ranks run would hang) is reported.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from ddpify.convert.record import Recording
from ddpify.convert.writes import OPEN, PATH_ARGUMENT, REMOVED_PATH, WRITERS
from ddpify.tree.cstutil import code, of_types

READERS = frozenset(
    {
        "numpy.load",
        "numpy.loadtxt",
        "pandas.read_csv",
        "pandas.read_json",
        "pandas.read_parquet",
        "pandas.read_pickle",
        "torch.load",
        "ddpify.runtime.load",
        "joblib.load",
        "cv2.imread",
        "imageio.imread",
        "imageio.v2.imread",
        "matplotlib.pyplot.imread",
        "PIL.Image.open",
        "torchvision.io.read_image",
        "zipfile.ZipFile",
        "tarfile.open",
        "shutil.copy",
        "shutil.copy2",
        "shutil.copyfile",
        "shutil.copytree",
        "os.listdir",
        "glob.glob",
    }
)
READ_METHODS = frozenset({"from_pretrained"})
# Writers given an open file (``json.dump(vocab, f)``): the position and keyword of the file.
_FILE_ARGUMENT = {"json.dump": (1, "fp"), "pickle.dump": (1, "file"), "yaml.dump": (1, "stream"), "yaml.safe_dump": (1, "stream")}


def _argument(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [a for a in call.args if a.keyword is None and not a.star]
    return positional[position].value if len(positional) > position else None


def written_path(recording: Recording, call: cst.Call) -> cst.BaseExpression | None:
    """The path ``call`` writes: ``np.save(path, a)``, ``tok.save_pretrained(d)``, the file
    opened for ``json.dump(vocab, f)`` or ``pickle.dump(x, open(p, "wb"))``, ``open(p, "w")``."""
    qualified = recording.qualified(call)
    if qualified & OPEN:
        return _argument(call, 0, "file")
    label = next((WRITERS[q] for q in qualified if q in WRITERS), None)
    if label is None and isinstance(call.func, cst.Attribute):
        label = f".{call.func.attr.value}()"
    if label in PATH_ARGUMENT:
        return _argument(call, *PATH_ARGUMENT[label])
    if "joblib.dump" in qualified:
        target = _argument(call, 1, "filename")
        return _opened_path(recording, call, target) or target
    where = next((_FILE_ARGUMENT[q] for q in qualified if q in _FILE_ARGUMENT), None)
    return _opened_path(recording, call, _argument(call, *where)) if where else None


def removed_path(recording: Recording, call: cst.Call) -> cst.BaseExpression | None:
    """The path ``call`` makes vanish: ``os.remove(p)``, ``shutil.rmtree(d)``, the source of
    ``shutil.move(src, dst)`` / ``os.rename(src, dst)``."""
    where = next((REMOVED_PATH[q] for q in recording.qualified(call) if q in REMOVED_PATH), None)
    return _argument(call, *where) if where else None


def _opened_path(recording: Recording, call: cst.Call, handle: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The path of the file ``handle`` is: ``open(p, ...)`` itself, the ``f`` of an enclosing
    ``with open(p, ...) as f:``, or a name assigned ``open(p, ...)`` in the same function."""
    if isinstance(handle, cst.Call) and recording.qualified(handle) & OPEN:
        return _argument(handle, 0, "file")
    if not isinstance(handle, cst.Name):
        return None
    for ancestor in recording.ancestors(call):
        if isinstance(ancestor, cst.With):
            for item in ancestor.items:
                if item.asname is not None and code(item.asname.name) == handle.value and isinstance(item.item, cst.Call):
                    return _opened_path(recording, call, item.item)
    function = recording.function_of(call)
    for value in recording.values_of(handle.value):
        if isinstance(value, cst.Call) and recording.function_of(value) is function and recording.qualified(value) & OPEN:
            return _argument(value, 0, "file")
    return None


class ReadBack:
    """Where the script reads a path: every reading call (``open(p)``, ``np.load(p)``,
    ``AutoTokenizer.from_pretrained(d)``, ...) by the text of its path, found on first use."""

    def __init__(self, recording: Recording) -> None:
        self._recording = recording
        self._reads: dict[str, list[cst.Call]] | None = None

    def _index(self) -> dict[str, list[cst.Call]]:
        if self._reads is None:
            self._reads = {}
            recording = self._recording
            for call in of_types(recording.module, cst.Call):
                qualified = recording.qualified(call)
                reads = (
                    qualified & READERS
                    or isinstance(call.func, cst.Attribute)
                    and call.func.attr.value in READ_METHODS
                    or qualified & OPEN
                    and _reading_mode(call)
                )
                if reads and call.args and call.args[0].keyword is None:
                    self._reads.setdefault(code(call.args[0].value), []).append(call)
        return self._reads

    def calls(self) -> list[cst.Call]:
        """Every reading call of the script, in visit order."""
        return [call for reads in self._index().values() for call in reads]

    def reads_of(self, path: cst.BaseExpression) -> list[cst.Call]:
        """The calls that read ``path`` (by its text; a name only where it is the same variable:
        the same function)."""
        recording = self._recording
        function = recording.function_of(path)
        named = isinstance(path, (cst.Name, cst.Attribute))
        return [read for read in self._index().get(code(path), []) if not (named and recording.function_of(read) is not function)]

    def line_reading(self, path: cst.BaseExpression, *, after: int, unless: Callable[[cst.Call], bool]) -> int | None:
        """The first line after ``after`` (or in another function) that reads ``path``, except
        the reads ``unless`` excuses."""
        recording = self._recording
        function = recording.function_of(path)
        for read in self.reads_of(path):
            if unless(read):
                continue
            line = recording.line(read)
            if line > after or recording.function_of(read) is not function and line != after:
                return line
        return None


def _reading_mode(call: cst.Call) -> bool:
    """``open(p)`` / ``open(p, "rb")``: no mode, or a literal one that only reads."""
    mode = _argument(call, 1, "mode")
    if mode is None:
        return True
    return isinstance(mode, cst.SimpleString) and not set(str(mode.evaluated_value)) & set("wax+")
