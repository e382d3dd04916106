"""The human-readable conversion report printed on stderr."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ddpify.findings import ConversionResult

STDOUT = "<stdout>"
# "line 25", "lines 3, 5 and 7" in a change's or an item's text: input lines
_LINE_REFERENCE = re.compile(r"\blines? (\d+(?:(?:, | and )\d+)*)\b")


def conversion_report(
    result: ConversionResult,
    source_name: str,
    target: str | None,
    *,
    locate: Callable[[int], str] | None = None,
    notes: Sequence[str] = (),
    launch: bool = True,
) -> str:
    """What changed, what needs a human, and how to launch the result.

    ``target`` is the file written, :data:`STDOUT`, or None when nothing is written (--diff):
    the launch lines then name a file the user still has to write, never one that does not
    exist; ``launch``: False for a module converted alongside a script (the script is what
    is launched). ``locate`` turns an input line into where the user sees it (a notebook's
    ``cell_3:12``); ``notes`` come first (what a notebook had that a script cannot do).
    """
    where = locate or (lambda line: f"L{line}")
    text = (lambda message: cite(message, locate)) if locate is not None else (lambda message: message)
    lines = [f"ddpify: {source_name}: {note}" for note in notes]
    arrow = f"{source_name} -> {target}" if target is not None else f"{source_name} (--diff: nothing written)"
    if not result.changed and not result.manual:
        lines.append(f"ddpify: {arrow}: {_unchanged(result, source_name)}")
        return "\n".join(lines) + "\n"
    if not result.changed:
        lines.append(f"ddpify: {arrow}: not converted, output is identical")
    else:
        lines.append(f"ddpify: {arrow}: {len(result.changes)} change(s), {len(result.manual)} item(s) for a human")
    if result.changes:
        lines.append("changed:")
        lines += [f"  {_at(where, c.line)}{text(c.what)}" for c in result.changes]
    if result.manual:
        lines.append("needs a human (not rewritten):")
        for item in result.manual:
            lines.append(f"  {_at(where, item.line)}{text(item.why)}")
            lines.append(f"  {'':6}-> {text(item.todo)}")
    if result.changed and launch:  # not for a module converted alongside the script
        lines += _launch(source_name, target)
    return "\n".join(lines) + "\n"


def cite(text: str, locate: Callable[[int], str]) -> str:
    """``text`` with each input line it names ("its loop at line 25", "lines 3 and 7") where
    the user sees it: a notebook's report cites ``cell_N:LINE`` throughout, never a line of
    the script its cells were joined into."""

    def located(match: re.Match[str]) -> str:
        return re.sub(r"\d+", lambda number: locate(int(number.group())), match.group(1))

    return _LINE_REFERENCE.sub(located, text)


def _unchanged(result: ConversionResult, source_name: str) -> str:
    """Why nothing changed: a converted script is not "without training code", and the tools
    for it are the linter and the torchrun check, not the converter."""
    if not result.already_converted:  # never "nothing to do" for a script whose training lives elsewhere
        loaded = _LOADED_BY_NAME.search(result.source)
        if loaded is not None:  # GradientEpisodicMemory: `Model = importlib.import_module('model.' + args.model)`
            line = result.source.count("\n", 0, loaded.start()) + 1
            return (
                "no optimizer, DataLoader or backward() in this file that ddpify can follow, output is identical; it loads "
                f"code by name at line {line} ({loaded.group(0).rstrip('(')}), so which module's optimizer and backward() "
                "train is decided at run time: convert the modules it can load (each builds the optimizer its model steps), "
                "or import the one it trains with directly and convert again"
            )
        return (
            "no training code in this file (no optimizer, DataLoader or backward() it can follow), output is identical; "
            "training done by code of other modules is not converted here: convert the file that holds the training loop"
        )
    return (
        f"already converted (it uses ddpify's runtime), output is identical; lint it with `ddpify check {source_name}`, "
        f"test it under torchrun with `ddpify verify {source_name}`"
    )


# code loaded by a name computed at run time: `importlib.import_module("model." + args.model)`
_LOADED_BY_NAME = re.compile(r"\b(importlib\.import_module|import_module|__import__)\(")


def suggested_output(source_name: str) -> str:
    """``train.py`` -> ``train_ddp.py``: the name the launch hints use when none is written."""
    stem = source_name.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return f"{stem}_ddp.py" if stem and not stem.startswith("<") else "train_ddp.py"


def _launch(source_name: str, target: str | None) -> list[str]:
    if target is not None and target.endswith(".ipynb"):
        return ["launch:", f"  run the cells of {target}: they write the script and start torchrun, one process per GPU"]
    if target is not None and target != STDOUT:
        script, title = target, "launch:"
    else:
        script = suggested_output(source_name)
        source = "-" if source_name == "<stdin>" else source_name
        title = f"launch, after writing it with `ddpify {source} -o {script}`{' (--diff wrote nothing)' if target is None else ''}:"
    return [
        title,
        f"  torchrun --standalone --nproc_per_node=NUM_GPUS {script} ARGS...   # one machine",
        f"  torchrun --standalone --nproc_per_node=2 {script} ARGS...          # CPU, gloo (a test run)",
        f"  python {script} ARGS...                                          # still one process, like the original",
        f"  ddpify verify {script} -- ARGS...                                # check it: sharding, sync, saves, hangs",
    ]


def _at(where: Callable[[int], str], line: int) -> str:
    return f"{where(line):<5} " if line else f"{'':6}"
