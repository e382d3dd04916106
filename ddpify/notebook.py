"""Jupyter notebooks as DDP scripts: the code cells become one Python script, and back.

A notebook cannot run under torchrun: every process needs the whole program from the top. So
``ddpify nb.ipynb -o train_ddp.py`` joins the code cells into a script (``# %% cell N`` marks
each cell, N counting every cell of the notebook, markdown included), comments out what only
IPython understands (``%magic``, ``%%cell magic``, ``!shell``, ``obj?``) with a note each, and
notes display-only cells, whose output a script never shows. The script then converts like any
``.py`` file, and ``ddpify check`` maps its findings back to ``nb.ipynb:cell_N:LINE:COL``.

Read with the standard library's json (the nbformat v4 layout: ``cells[].cell_type`` and
``source``, a string or a list of strings), so no dependency is added and ``.py`` files never
import any of this.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path

from ddpify.errors import DdpifyError

# Cell magics whose body is Python that IPython runs (timed, captured, profiled): the body
# stays. Any other cell magic (%%bash, %%writefile, %%html...) holds no Python.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
# Calls that only show something: a cell of nothing else is a display-only cell. Those that
# print or draw still do so in a script; the others (df.head()) only return what Jupyter shows.
OUTPUT_CALLS = frozenset(
    {"display", "print", "pprint", "show", "plot", "imshow", "hist", "scatter", "bar", "title", "xlabel", "ylabel", "legend"}
    | {"grid", "figure", "subplot", "tight_layout", "colorbar", "clf", "close", "info"}
)
DISPLAY_CALLS = OUTPUT_CALLS | {"head", "tail", "describe", "summary", "sample"}
_ASSIGNED_MAGIC = re.compile(r"[A-Za-z_][\w.,\s]*=\s*[%!]")


@dataclass(frozen=True)
class Note:
    """Something the notebook had that the script does not do, at a cell's line."""

    cell: int
    line: int
    text: str


@dataclass(frozen=True)
class NotebookScript:
    """The code cells as one script; ``where[i]`` is (cell, line in cell) of script line i + 1
    (a cell's ``# %% cell N`` marker counts as its line 1: only file-level findings land there)."""

    text: str
    where: tuple[tuple[int, int], ...]
    notes: tuple[Note, ...]
    metadata: dict

    def locate(self, line: int) -> tuple[int, int] | None:
        return self.where[line - 1] if 0 < line <= len(self.where) else None


def read(path: Path) -> NotebookScript:
    """The script of the notebook at ``path``; a malformed notebook is a one-line error."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DdpifyError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise DdpifyError(f"{path}: is a directory, expected a notebook") from None
    except OSError as exc:
        raise DdpifyError(f"{path}: cannot read: {exc.strerror}") from None
    return to_script(data, str(path))


def to_script(data: bytes, name: str) -> NotebookScript:
    """The code cells of a notebook's bytes as one script. Each cell must parse on its own, as
    Jupyter runs them one by one, so a syntax error names its cell, not a line of the script."""
    try:
        notebook = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise DdpifyError(f"{name}: not a notebook: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise DdpifyError(f"{name}: not a notebook: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise DdpifyError(f"{name}: not a notebook: JSON nested too deeply") from None
    cells = _cells(notebook, name)
    lines: list[str] = []
    where: list[tuple[int, int]] = []
    notes: list[Note] = []
    for number, cell in enumerate(cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        source = _source(cell, name, number)
        if not source.strip():
            continue
        code = _python_lines(source.splitlines(), number, notes)
        _check_cell(code, name, number, notes)
        lines.append(f"# %% cell {number}")
        where.append((number, 1))
        lines += code
        where += [(number, line) for line in range(1, len(code) + 1)]
        lines.append("")
        where.append((number, len(code) + 1))
    metadata = notebook.get("metadata") if isinstance(notebook.get("metadata"), dict) else {}
    return NotebookScript("\n".join(lines[:-1]) + "\n" if lines else "", tuple(where[:-1]), tuple(notes), metadata)


def _cells(notebook: object, name: str) -> list[dict]:
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise DdpifyError(f"{name}: not a notebook: no list of cells (nbformat 4 expected)")
    if notebook.get("nbformat") != 4:
        raise DdpifyError(
            f"{name}: nbformat {notebook.get('nbformat')!r} is not supported (4 expected; `jupyter nbconvert --to notebook` upgrades it)"
        )
    for number, cell in enumerate(notebook["cells"], start=1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise DdpifyError(f"{name}: not a notebook: cell {number} has no cell_type")
    return notebook["cells"]


def _source(cell: dict, name: str, number: int) -> str:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(part, str) for part in source):
        return "".join(source)
    if isinstance(source, str):
        return source
    raise DdpifyError(f"{name}: not a notebook: the source of cell {number} is neither a string nor a list of strings")


def _python_lines(lines: list[str], cell: int, notes: list[Note]) -> list[str]:
    """The cell with IPython-only lines commented out, line for line (cell lines stay put)."""
    first = lines[0].strip() if lines else ""
    if not first.startswith("%%"):
        return _without_line_magics(lines, cell, notes, 1)
    magic = first[2:].split(maxsplit=1)[0] if first[2:].strip() else ""
    if magic not in PYTHON_CELL_MAGICS:
        notes.append(
            Note(cell, 1, f"cell magic `{_short(first)}` (not Python): the whole cell commented out; do its work before launching")
        )
        return [f"# {line}" if line.strip() else line for line in lines]
    notes.append(Note(cell, 1, f"cell magic `{_short(first)}` commented out; its Python body is kept"))
    return [f"# {lines[0]}", *_without_line_magics(lines[1:], cell, notes, 2)]


def _without_line_magics(lines: list[str], cell: int, notes: list[Note], first_line: int) -> list[str]:
    """``%magic``, ``!shell``, ``x = !cmd`` and ``obj?`` where a statement starts, commented out
    (``pass  # ...`` when indented, so a block keeps a body), with their backslash continuations."""
    scanner = _Scanner()
    out: list[str] = []
    continued = False  # the previous line was IPython syntax ending in a backslash
    for number, line in enumerate(lines, start=first_line):
        stripped = line.strip()
        if continued or (scanner.at_statement_start() and _is_ipython(stripped)):
            if not continued:
                notes.append(Note(cell, number, _describe(stripped)))
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}pass  # {stripped}" if indent and not continued else f"# {line}")
            continued = line.rstrip().endswith("\\")
            continue
        scanner.feed(line)
        out.append(line)
    return out


def _is_ipython(stripped: str) -> bool:
    return (
        stripped.startswith(("%", "!", "?"))
        or bool(_ASSIGNED_MAGIC.match(stripped))
        or (stripped.endswith("?") and "#" not in stripped and "'" not in stripped and '"' not in stripped)
    )


def _short(text: str) -> str:
    return text if len(text) <= 60 else text[:57] + "..."


def _describe(stripped: str) -> str:
    shown = _short(stripped)
    if stripped.startswith("!") or re.match(r"[\w.,\s]+=\s*!", stripped):
        return f"shell escape `{shown}` commented out: run it in a shell before launching"
    if stripped.startswith("?") or stripped.endswith("?"):
        return f"IPython help `{shown}` commented out"
    return f"IPython magic `{shown}` commented out"


class _Scanner:
    """Just enough of Python's lexer to tell whether a line starts a statement: open brackets,
    triple-quoted strings and backslash continuations carry over; a ``%`` there is an operator."""

    def __init__(self) -> None:
        self.depth = 0
        self.string: str | None = None
        self.continued = False

    def at_statement_start(self) -> bool:
        return self.depth == 0 and self.string is None and not self.continued

    def feed(self, line: str) -> None:
        i, end = 0, len(line)
        while i < end:
            if self.string is not None:
                if line.startswith(self.string, i):
                    i, self.string = i + len(self.string), None
                else:
                    i += 2 if line[i] == "\\" else 1
                continue
            char = line[i]
            if char == "#":
                end = i
                break
            if char in "\"'":
                if line.startswith(char * 3, i):
                    self.string, i = char * 3, i + 3
                    continue
                i += 1
                while i < end and line[i] != char:
                    i += 2 if line[i] == "\\" else 1
            elif char in "([{":
                self.depth += 1
            elif char in ")]}":
                self.depth = max(0, self.depth - 1)
            i += 1
        self.continued = self.string is None and line[:end].rstrip().endswith("\\")


def _check_cell(code: list[str], name: str, number: int, notes: list[Note]) -> None:
    """Each cell must parse on its own (Jupyter runs them one by one): a syntax error names its
    cell. A cell that only shows something is noted: a script shows nothing."""
    try:
        tree = ast.parse("\n".join(code) + "\n")
    except SyntaxError as exc:
        raise DdpifyError(f"{name}:cell_{number}:{exc.lineno or 1}:{exc.offset or 1}: syntax error: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        raise DdpifyError(f"{name}:cell_{number}: cannot parse: {exc}") from None
    if not tree.body or not all(isinstance(statement, ast.Expr) and _displays(statement.value) for statement in tree.body):
        return
    last = tree.body[-1]
    assert isinstance(last, ast.Expr)
    shown = _short((ast.get_source_segment("\n".join(code), last.value) or "...").splitlines()[0])
    if _called(last.value) in OUTPUT_CALLS:
        text = f"display-only cell (`{shown}`): output only; kept (the changes say what now runs on rank 0 alone)"
    else:
        text = f"display-only cell (`{shown}`): a script does not show a cell's value; kept, computed on every rank and shown nowhere"
    notes.append(Note(number, tree.body[0].lineno, text))


def _displays(expression: ast.expr) -> bool:
    """A bare value (Jupyter shows it) or a call that only shows or plots."""
    if isinstance(expression, ast.Call):
        return _called(expression) in DISPLAY_CALLS
    return not isinstance(expression, ast.Await | ast.Yield | ast.YieldFrom | ast.NamedExpr)


def _called(expression: ast.expr) -> str:
    if not isinstance(expression, ast.Call):
        return ""
    function = expression.func
    return function.attr if isinstance(function, ast.Attribute) else function.id if isinstance(function, ast.Name) else ""


def launcher(script: str, script_name: str, source_name: str, notes: list[str], metadata: dict, *, launch: bool) -> str:
    """A notebook whose first code cell writes ``script_name`` and whose second launches it with
    torchrun, one process per GPU: the DDP run from the notebook people already work in.
    Without ``launch`` (nothing to distribute) the launch cell is replaced by the reason."""
    about = [
        f"# DDP run of `{source_name}`, converted by ddpify",
        "",
        f"The next cell writes `{script_name}` (the code cells of `{source_name}` as one script, converted for "
        "DistributedDataParallel); the cell after it launches the script with torchrun, one process per GPU "
        "(one CPU process with gloo where there is none). Run them from this notebook's folder.",
    ]
    if notes:
        about += ["", "**Before launching**, look at what the conversion reported:", "", *(f"- {note}" for note in notes)]
    cells = [_cell("markdown", "ddpify-about", "\n".join(about))]
    cells.append(_cell("code", "ddpify-script", f"%%writefile {script_name}\n{script}"))
    if launch:
        command = (
            "import torch\n\n"
            "nproc = torch.cuda.device_count() or 1  # one process per GPU; one CPU process (gloo) without GPUs\n"
            f"!torchrun --standalone --nproc_per_node={{nproc}} {script_name}"
        )
        cells.append(_cell("code", "ddpify-launch", command))
    else:
        reason = f"Not launched: ddpify found no training code in `{source_name}` (no DataLoader, optimizer or backward), so there is nothing to distribute."
        cells.append(_cell("markdown", "ddpify-not-launched", reason))
    kept = {key: metadata[key] for key in ("kernelspec", "language_info") if key in metadata}
    kept.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    document = {"cells": cells, "metadata": kept, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def _cell(kind: str, identifier: str, text: str) -> dict:
    cell: dict = {"cell_type": kind, "id": identifier, "metadata": {}, "source": text.splitlines(keepends=True)}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell
